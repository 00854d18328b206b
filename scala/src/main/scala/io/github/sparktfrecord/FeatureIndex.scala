package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.unsafe.Platform

/** Open-addressing lookup from a feature name's UTF-8 bytes to its column ordinal (null: none). */
private[sparktfrecord] final class FeatureIndex(names: Array[String]) {
  private val keys = names.map(n => if (n == null) null else n.getBytes(UTF_8))
  private val mask = Integer.highestOneBit(math.max(4, keys.length * 4)) - 1
  private val slots: Array[Int] = {
    val table = Array.fill(mask + 1)(-1)
    keys.indices.filter(keys(_) != null).foreach { i =>
      var s = FeatureIndex.hash(keys(i), 0, keys(i).length) & mask
      while (table(s) >= 0) s = (s + 1) & mask
      // Spark may request the same name twice only if the schema has it twice; first one wins.
      if (!keys.indices.take(i).exists(j => java.util.Arrays.equals(keys(j), keys(i)))) {
        table(s) = i
      }
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
  def is(i: Int, buf: Array[Byte], off: Int, len: Int): Boolean = {
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
