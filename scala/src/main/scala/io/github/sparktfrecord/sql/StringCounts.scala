package io.github.sparktfrecord.sql

import java.io.{DataInputStream, DataOutputStream}
import java.nio.ByteBuffer

import io.github.sparktfrecord.wire.Utf8

import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.array.ByteArrayMethods

/**
 * How many times each distinct byte string came, exactly: for TFDV's unique count, top values,
 * rank histogram, average length and invalid UTF-8 count. An open-addressing table over one
 * growing byte arena, so adding a value that is already counted allocates nothing.
 */
private[sparktfrecord] final class StringCounts {
  private var arena = new Array[Byte](1 << 16)
  private var used = 0
  private var starts = new Array[Int](1 << 10)
  private var lengths = new Array[Int](1 << 10)
  private var hashes = new Array[Long](1 << 10)
  private var counts = new Array[Long](1 << 10)
  private var size = 0
  private var slots = new Array[Int](1 << 11) // an entry's index + 1; 0: empty

  /** The distinct values counted. */
  def distinct: Int = size

  /** Counts `times` more of the `length` bytes at `offset` in `base` (Spark's unsafe address). */
  def add(base: AnyRef, offset: Long, length: Int, times: Long): Unit =
    add(base, offset, length, times, XXH64.hashUnsafeBytes(base, offset, length, 42L))

  // The same, with the bytes' hash known (another table's: merged without hashing again).
  private def add(base: AnyRef, offset: Long, length: Int, times: Long, hash: Long): Unit = {
    val mask = slots.length - 1
    var at = (hash ^ (hash >>> 32)).toInt & mask
    while (slots(at) != 0) {
      val e = slots(at) - 1
      if (hashes(e) == hash && lengths(e) == length && ByteArrayMethods.arrayEquals(
          arena, Platform.BYTE_ARRAY_OFFSET + starts(e), base, offset, length)) {
        counts(e) += times
        return
      }
      at = (at + 1) & mask
    }
    if (size == starts.length) grow()
    roomFor(length)
    Platform.copyMemory(base, offset, arena, Platform.BYTE_ARRAY_OFFSET + used, length)
    starts(size) = used
    lengths(size) = length
    hashes(size) = hash
    counts(size) = times
    used += length
    size += 1
    slots(at) = size
    if (size * 2 > slots.length) rehash()
  }

  // The arena made to hold `bytes` more bytes, doubled at least.
  private def roomFor(bytes: Int): Unit =
    if (used + bytes > arena.length) {
      arena = java.util.Arrays.copyOf(arena, math.max(arena.length * 2, used + bytes))
    }

  private def grow(): Unit = grow(starts.length * 2)

  private def grow(more: Int): Unit = {
    starts = java.util.Arrays.copyOf(starts, more)
    lengths = java.util.Arrays.copyOf(lengths, more)
    hashes = java.util.Arrays.copyOf(hashes, more)
    counts = java.util.Arrays.copyOf(counts, more)
  }

  private def rehash(): Unit = rehash(slots.length * 2)

  private def rehash(to: Int): Unit = {
    slots = new Array[Int](to)
    val mask = slots.length - 1
    var e = 0
    while (e < size) {
      var at = (hashes(e) ^ (hashes(e) >>> 32)).toInt & mask
      while (slots(at) != 0) at = (at + 1) & mask
      slots(at) = e + 1
      e += 1
    }
  }

  /**
   * Every value and its count: how many, their lengths, their counts, their hashes, then their
   * bytes.
   */
  def write(out: DataOutputStream): Unit = {
    val block = ByteBuffer.allocate(8 + 20 * size)
    block.putInt(size).putInt(used)
    block.asIntBuffer().put(lengths, 0, size)
    block.position(8 + 4 * size)
    block.asLongBuffer().put(counts, 0, size)
    block.position(8 + 12 * size)
    block.asLongBuffer().put(hashes, 0, size)
    out.write(block.array())
    out.write(arena, 0, used)
  }

  /** Adds what [[write]] wrote (another partition's counts), room made for all of it first. */
  def addWritten(in: DataInputStream): Unit = {
    val head = ByteBuffer.allocate(8)
    in.readFully(head.array())
    val (entries, bytes) = (head.getInt(0), head.getInt(4))
    val block = ByteBuffer.allocate(20 * entries + bytes)
    in.readFully(block.array())
    reserve(entries, bytes)
    val lengthsIn = block.asIntBuffer()
    block.position(4 * entries)
    val countsIn = block.asLongBuffer()
    block.position(12 * entries)
    val hashesIn = block.asLongBuffer()
    var at = Platform.BYTE_ARRAY_OFFSET + 20L * entries
    var e = 0
    while (e < entries) {
      val length = lengthsIn.get(e)
      add(block.array(), at, length, countsIn.get(e), hashesIn.get(e))
      at += length
      e += 1
    }
  }

  // Room for `entries` more distinct values of `bytes` bytes in all, made at once.
  private def reserve(entries: Int, bytes: Int): Unit = {
    val needed = size + entries
    if (needed > starts.length) grow(Integer.highestOneBit(needed) * 2)
    roomFor(bytes)
    if (needed * 2 > slots.length) rehash(Integer.highestOneBit(needed) * 4)
  }

  /**
   * TFDV's figures of the values: the distinct count, their bytes and the count of those not
   * UTF-8 (each weighed by its count), then the `top` most frequent, ties larger bytes first, as
   * (length, bytes, count).
   */
  def writeFigures(out: DataOutputStream, top: Int): Unit = {
    var bytes = 0L
    var invalid = 0L
    var e = 0
    while (e < size) {
      bytes += lengths(e).toLong * counts(e)
      if (!Utf8.isValid(arena, starts(e), lengths(e))) invalid += counts(e)
      e += 1
    }
    out.writeLong(size)
    out.writeLong(bytes)
    out.writeLong(invalid)
    val order = topEntries(top)
    out.writeInt(order.length)
    for (e <- order) {
      out.writeInt(lengths(e))
      out.write(arena, starts(e), lengths(e))
      out.writeLong(counts(e))
    }
  }

  /** The `top` entries first by [[before]], in that order: a heap of them, its least on top. */
  private def topEntries(top: Int): Array[Int] = {
    val heap = new Array[Int](math.min(top, size))
    var held = 0
    def sift(from: Int): Unit = { // down from `from`: the entry that comes last is at the root
      var at = from
      var done = false
      while (!done) {
        val l = 2 * at + 1
        var last = at
        if (l < held && before(heap(last), heap(l))) last = l
        if (l + 1 < held && before(heap(last), heap(l + 1))) last = l + 1
        if (last == at) done = true
        else {
          val t = heap(at); heap(at) = heap(last); heap(last) = t
          at = last
        }
      }
    }
    var e = 0
    while (e < size) {
      if (held < heap.length) {
        heap(held) = e
        held += 1
        if (held == heap.length) (held / 2 to 0 by -1).foreach(sift)
      } else if (before(e, heap(0))) {
        heap(0) = e
        sift(0)
      }
      e += 1
    }
    heap.sortWith(before)
  }

  private def before(a: Int, b: Int): Boolean =
    if (counts(a) != counts(b)) counts(a) > counts(b)
    else {
      val (la, lb) = (lengths(a), lengths(b))
      var i = 0
      while (i < la && i < lb && arena(starts(a) + i) == arena(starts(b) + i)) i += 1
      if (i < la && i < lb) (arena(starts(a) + i) & 0xff) > (arena(starts(b) + i) & 0xff)
      else la > lb
    }
}
