package io.github.sparktfrecord.sql

import java.io.{DataInputStream, DataOutputStream}

import io.github.sparktfrecord.sql.StringCounts._
import io.github.sparktfrecord.wire.{ProtoWire, Utf8, WireCursor}

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
  // Per slot: the high 32 bits of its entry's hash, then the entry's index + 1; 0: empty. A probe
  // compares those hash bits in the slot itself, reading the entry only when they match; they
  // also choose the first slot tried, so a rehash needs nothing but the slots.
  private var slots = new Array[Long](1 << 11)
  // Values added but not yet looked up, a [[Group]] at most: their bytes, lengths, times and
  // hashes, looked up together by [[settle]].
  private val waiting = new Array[Byte](WaitingBytes)
  private var waitingUsed = 0
  private val waitingLengths = new Array[Int](Group)
  private val waitingTimes = new Array[Long](Group)
  private val waitingHashes = new Array[Long](Group)
  private var waitingCount = 0
  private val firsts = new Array[Long](Group) // a group's first slots, read ahead

  /** The distinct values counted. */
  def distinct: Int = {
    settle()
    size
  }

  /**
   * Counts `times` more of the `length` bytes at `offset` in `base` (Spark's unsafe address). The
   * value is copied aside and looked up with the next ones, a [[Group]] at a time ([[settle]]):
   * one at a time, each waited for its first slot to come from memory (a task's table of a
   * million-value column is megabytes), and the lookups took a tenth of the task.
   */
  def add(base: AnyRef, offset: Long, length: Int, times: Long): Unit = {
    if (waitingUsed + length > waiting.length) settle()
    if (length > waiting.length) add(base, offset, length, times, hash(base, offset, length))
    else {
      val at = Platform.BYTE_ARRAY_OFFSET + waitingUsed
      Platform.copyMemory(base, offset, waiting, at, length)
      waitingLengths(waitingCount) = length
      waitingTimes(waitingCount) = times
      waitingHashes(waitingCount) = hash(waiting, at, length)
      waitingUsed += length
      waitingCount += 1
      if (waitingCount == Group) settle()
    }
  }

  /** The values waiting, counted: their first slots read together, then each looked up. */
  private def settle(): Unit = {
    readAhead(waitingHashes, 0, waitingCount)
    var at = Platform.BYTE_ARRAY_OFFSET.toLong
    var g = 0
    while (g < waitingCount) {
      add(waiting, at, waitingLengths(g), waitingTimes(g), waitingHashes(g))
      at += waitingLengths(g)
      g += 1
    }
    waitingCount = 0
    waitingUsed = 0
  }

  /**
   * The first slots of the values of `hashes` from `from` until `until` (a [[Group]] at most),
   * read together into [[firsts]]: their cache misses overlap, and each lookup after finds its
   * slot cached (a probe's loop waits for its first slot before it can go on to the next value).
   */
  private def readAhead(hashes: Array[Long], from: Int, until: Int): Unit = {
    val mask = slots.length - 1
    var g = from
    while (g < until) {
      firsts(g - from) = slots((hashes(g) >>> 32).toInt & mask)
      g += 1
    }
  }

  // A value counted now, its hash known.
  private def add(base: AnyRef, offset: Long, length: Int, times: Long, hash: Long): Unit = {
    val found = find(base, offset, length, hash)
    if (found >= 0) counts(found) += times
    else {
      append(base, offset, length, times, hash)
      slots(-1 - found) = (hash & HighBits) | size
      if (size * 2 > slots.length) rehash()
    }
  }

  // The entry of the `length` bytes at `offset` in `base`, or if none -1 - the empty slot where
  // they would go. Only a slot with the same high hash bits leads to the entry's own arrays.
  private def find(base: AnyRef, offset: Long, length: Int, hash: Long): Int = {
    val mask = slots.length - 1
    val high = hash & HighBits
    var at = (hash >>> 32).toInt & mask
    var slot = slots(at)
    while (slot != 0) {
      if ((slot & HighBits) == high) {
        val e = slot.toInt - 1
        if (lengths(e) == length && ByteArrayMethods.arrayEquals(
            arena, Platform.BYTE_ARRAY_OFFSET + starts(e), base, offset, length)) {
          return e
        }
      }
      at = (at + 1) & mask
      slot = slots(at)
    }
    -1 - at
  }

  // A new entry, not yet in any slot.
  private def append(base: AnyRef, offset: Long, length: Int, times: Long, hash: Long): Unit = {
    if (size == starts.length) grow()
    roomFor(length)
    Platform.copyMemory(base, offset, arena, Platform.BYTE_ARRAY_OFFSET + used, length)
    starts(size) = used
    lengths(size) = length
    hashes(size) = hash
    counts(size) = times
    used += length
    size += 1
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

  // The slots moved in their order: a read straight through, writes in a few runs.
  private def rehash(to: Int): Unit = {
    val old = slots
    slots = new Array[Long](to)
    val mask = to - 1
    var i = 0
    while (i < old.length) {
      val slot = old(i)
      if (slot != 0) {
        var at = (slot >>> 32).toInt & mask
        while (slots(at) != 0) at = (at + 1) & mask
        slots(at) = slot
      }
      i += 1
    }
  }

  /** The bytes [[write]] writes. */
  def writtenSize: Int = {
    settle()
    12 + heads + used
  }

  // The bytes of the values' lengths and counts as varints.
  private def heads: Int = {
    var n = 0
    var e = 0
    while (e < size) {
      n += ProtoWire.varintSize(lengths(e)) + ProtoWire.varintSize(counts(e))
      e += 1
    }
    n
  }

  /**
   * Every value and its count: how many values, the bytes of their heads, their bytes in all;
   * then per value its head, its length and count as varints (two bytes for most); then their
   * bytes. No hash: the driver hashes each value again (a few nanoseconds), which costs less than
   * 8 bytes more per value through the task's result (serialized, stored, fetched and read).
   */
  def write(out: DataOutputStream): Unit = {
    settle()
    val block = new Array[Byte](heads)
    var at = 0
    var e = 0
    while (e < size) {
      at = ProtoWire.writeVarint(block, at, lengths(e))
      at = ProtoWire.writeVarint(block, at, counts(e))
      e += 1
    }
    out.writeInt(size)
    out.writeInt(block.length)
    out.writeInt(used)
    out.write(block)
    out.write(arena, 0, used)
  }

  /**
   * Adds what [[write]] wrote (another partition's counts, each value once), room made for all of
   * it first: the heads are read and the values hashed, the values already counted are found, the
   * new are appended in their order (the entries as if added one by one), then the new are given
   * slots. Apart, each pass is small enough that the processor runs many values ahead and their
   * cache misses overlap, where one `add` per value waited for each of its misses in turn; and
   * each is a small method, compiled early.
   */
  def addWritten(in: DataInputStream): Unit = {
    settle()
    val entries = in.readInt()
    val headBytes = in.readInt()
    val bytes = in.readInt()
    val block = new Array[Byte](headBytes + bytes)
    in.readFully(block)
    val part = new Part(entries)
    part.read(block, headBytes)
    reserve(entries, bytes)
    val found = if (size == 0) null else foundIn(block, part) // null: none counted yet
    val first = size
    appendFrom(block, part, found)
    slotsFrom(first)
  }

  // Each of a written part's values' entry here, or a negative number where it has none.
  private def foundIn(block: Array[Byte], part: Part): Array[Int] = {
    val found = new Array[Int](part.entries)
    var e = 0
    while (e < part.entries) {
      val end = math.min(e + Group, part.entries)
      readAhead(part.hashes, e, end)
      while (e < end) {
        found(e) = find(block, part.offsets(e), part.lengths(e), part.hashes(e))
        e += 1
      }
    }
    found
  }

  // A written part's values added: counts to those `found`, the others appended in order.
  private def appendFrom(block: Array[Byte], part: Part, found: Array[Int]): Unit = {
    var e = 0
    while (e < part.entries) {
      if (found != null && found(e) >= 0) counts(found(e)) += part.counts(e)
      else append(block, part.offsets(e), part.lengths(e), part.counts(e), part.hashes(e))
      e += 1
    }
  }

  // Slots for the entries from `first` on (room made: no rehash).
  private def slotsFrom(first: Int): Unit = {
    val mask = slots.length - 1
    var e = first
    while (e < size) {
      var slot = (hashes(e) >>> 32).toInt & mask
      while (slots(slot) != 0) slot = (slot + 1) & mask
      slots(slot) = (hashes(e) & HighBits) | (e + 1)
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
    settle()
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

private[sql] object StringCounts {
  /** The hash bits a slot holds, beside its entry's index. */
  private final val HighBits = 0xffffffff00000000L

  /** The hash of the `length` bytes at `offset` in `base`, as every table takes it. */
  private def hash(base: AnyRef, offset: Long, length: Int): Long =
    XXH64.hashUnsafeBytes(base, offset, length, 42L)

  /**
   * A written part's values: where each is in its block, its length and count (read from its
   * head), and its hash.
   */
  private final class Part(val entries: Int) {
    val offsets = new Array[Long](entries)
    val lengths = new Array[Int](entries)
    val counts = new Array[Long](entries)
    val hashes = new Array[Long](entries)

    /** Reads the heads at the start of `block`, and hashes the values after them. */
    def read(block: Array[Byte], headBytes: Int): Unit = {
      val cursor = new WireCursor
      cursor.buf = block
      var at = Platform.BYTE_ARRAY_OFFSET + headBytes.toLong
      var e = 0
      while (e < entries) {
        offsets(e) = at
        lengths(e) = cursor.readVarint(headBytes).toInt
        counts(e) = cursor.readVarint(headBytes)
        hashes(e) = hash(block, at, lengths(e))
        at += lengths(e)
        e += 1
      }
    }
  }

  /** How many values' first slots are read at once, ahead of finding them. */
  private final val Group = 64

  /** The bytes of the values waiting, at most: a longer value is looked up at once. */
  private final val WaitingBytes = 4096
}
