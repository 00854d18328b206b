package io.github.sparktfrecord.wire

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.unsafe.Platform

/** Answers which number a feature name (its UTF-8 bytes) stands for, or -1. */
private[sparktfrecord] trait FeatureNames {
  def find(buf: Array[Byte], off: Int, len: Int): Int
}

/** Open-addressing lookup from a feature name's UTF-8 bytes to its column ordinal (null: none). */
private[sparktfrecord] final class FeatureIndex(names: Array[String]) extends FeatureNames {
  private val keys = names.map(n => if (n == null) null else n.getBytes(UTF_8))
  private val mask = Integer.highestOneBit(math.max(4, keys.length * 4)) - 1
  private val slots: Array[Int] = {
    val table = Array.fill(mask + 1)(-1)
    var i = 0
    while (i < keys.length) {
      val k = keys(i)
      if (k != null) {
        // Spark may request the same name twice only if the schema has it twice; first one wins.
        // An equal name hashes alike, so it lies on this probe sequence: one pass over it, not
        // a compare with every name before (half a million per file at 1,000 columns).
        var s = FeatureIndex.hash(k, 0, k.length) & mask
        while (table(s) >= 0 && !java.util.Arrays.equals(keys(table(s)), k)) s = (s + 1) & mask
        if (table(s) < 0) table(s) = i
      }
      i += 1
    }
    table
  }

  /** Names of up to eight bytes as little-endian longs, compared in one go (else unused). */
  private val words: Array[Long] = keys.map { k =>
    if (k == null || k.length > 8) 0L
    else k.indices.map(j => (k(j) & 0xffL) << (8 * j)).foldLeft(0L)(_ | _)
  }
  private val wordMasks: Array[Long] =
    keys.map(k => if (k == null || k.length > 8 || k.isEmpty) 0L else -1L >>> (64 - 8 * k.length))

  /** Whether column `i` is named by `buf[off, off + len)`. */
  private def is(i: Int, buf: Array[Byte], off: Int, len: Int): Boolean = {
    val k = keys(i)
    if (k.length != len) return false
    if (len <= 8 && ProtoWire.WordReads && buf.length - off >= 8) {
      val word = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + off)
      return ((word ^ words(i)) & wordMasks(i)) == 0L
    }
    var j = 0
    while (j < len) {
      if (k(j) != buf(off + j)) return false
      j += 1
    }
    true
  }

  /** The ordinal of the column named by `buf[off, off + len)`, or -1. */
  def find(buf: Array[Byte], off: Int, len: Int): Int = {
    var s = FeatureIndex.hash(buf, off, len) & mask
    while (true) {
      val i = slots(s)
      if (i < 0) return -1
      if (is(i, buf, off, len)) return i
      s = (s + 1) & mask
    }
    -1
  }
}

/**
 * The feature names of the previous records by position, with what `names` answered for each:
 * records of one file list their features in the same order, so a name is recognised by comparing
 * its bytes with the name met at its position last time, without hashing it. Unwanted names are
 * remembered too, so a query of a few columns of a wide record hashes nothing. A name that
 * differs from last time's is looked up and learned in its place. The one name-by-position cache
 * of the read path: the fast and the general path of a file share one.
 */
private[sparktfrecord] final class FeatureOrder(names: FeatureNames) {
  import FeatureOrder._

  /**
   * Per position, [[Stride]] longs side by side, so that one recognition reads one cache line:
   * the name's length (high 32 bits; -1: none learned) and its answer (low 32 bits); its first
   * eight bytes as a little-endian word; the mask of the bytes the name has of them; where its
   * bytes start in [[learned]] (high 32 bits) and the room they have there (low 32 bits).
   */
  private var state: Array[Long] = newState(16)
  private var learned = new Array[Byte](1024)
  private var used = 0

  /** The position in the record of the next name [[next]] is asked for. */
  private var position = 0

  /** A new record: its first name comes next. */
  def startRecord(): Unit = position = 0

  /** What `names.find` answers for the record's next name, `buf[off, off + len)`. */
  def next(buf: Array[Byte], off: Int, len: Int): Int = {
    val p = position
    position += 1
    at(p, buf, off, len)
  }

  /** What `names.find` answers for the name `buf[off, off + len)` at `position` of the record. */
  def at(position: Int, buf: Array[Byte], off: Int, len: Int): Int = {
    val s = position * Stride
    val state = this.state
    if (s < state.length) {
      val head = state(s)
      if ((head >> 32).toInt == len) {
        // A name of up to eight bytes is one masked word, where eight bytes can be read.
        if (len <= 8 && ProtoWire.WordReads && off <= buf.length - 8) {
          val word = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + off)
          if (((word ^ state(s + 1)) & state(s + 2)) == 0L) return head.toInt
        } else if (ProtoWire.sameBytes(learned, (state(s + 3) >>> 32).toInt, buf, off, len)) {
          return head.toInt
        }
      }
    }
    learn(position, buf, off, len)
  }

  private def learn(position: Int, buf: Array[Byte], off: Int, len: Int): Int = {
    val id = names.find(buf, off, len)
    // What a hostile record could make this hold stays small: long names and far positions are
    // looked up each time.
    if (len > MaxNameLength || position >= MaxPositions) return id
    val s = position * Stride
    if (s >= state.length) grow(position + 1)
    val capacity = if (state(s) == Unlearned) 0 else state(s + 3).toInt
    if (len > capacity) {
      if (used + len > learned.length) {
        // Records whose order keeps changing: start afresh rather than grow without bound.
        if (used + len > MaxNameBytes) forget()
        if (used + len > learned.length) {
          learned = java.util.Arrays.copyOf(learned, math.max(learned.length * 2, used + len))
        }
      }
      state(s + 3) = (used.toLong << 32) | len
      used += len
    }
    val start = (state(s + 3) >>> 32).toInt
    System.arraycopy(buf, off, learned, start, len)
    var word = 0L
    var j = 0
    while (j < len && j < 8) { word |= (buf(off + j) & 0xffL) << (8 * j); j += 1 }
    state(s) = (len.toLong << 32) | (id & 0xffffffffL)
    state(s + 1) = word
    state(s + 2) = if (len == 0) 0L else if (len >= 8) -1L else -1L >>> (64 - 8 * len)
    id
  }

  private def grow(positions: Int): Unit = {
    val old = state
    state = newState(math.max(positions, old.length / Stride * 2))
    System.arraycopy(old, 0, state, 0, old.length)
  }

  private def forget(): Unit = {
    state = newState(state.length / Stride)
    used = 0
  }
}

private[sparktfrecord] object FeatureOrder {
  /** Longs per position in [[FeatureOrder]]'s state. */
  final val Stride = 4
  private final val Unlearned = -1L << 32
  final val MaxNameBytes = 1 << 20
  final val MaxNameLength = 1024
  final val MaxPositions = 1 << 16

  private def newState(positions: Int): Array[Long] = {
    val a = new Array[Long](positions * Stride)
    var s = 0
    while (s < a.length) { a(s) = Unlearned; s += Stride }
    a
  }
}

private[sparktfrecord] object FeatureIndex {
  def hash(buf: Array[Byte], off: Int, len: Int): Int = {
    var h = len
    var i = off
    val end = off + len
    while (i < end) {
      h = 31 * h + buf(i)
      i += 1
    }
    h ^ (h >>> 16)
  }
}
