package io.github.sparktfrecord.wire

import org.apache.spark.unsafe.Platform

/**
 * The layout prediction of the fast path: the header of the map entry met at each position of the
 * previous records (`0A L 0A keyLen key 12 VL`, the lengths `L` and `VL` one or two varint bytes
 * each), with the column it stands for. Records of one writer list the same keys in the same
 * order with lengths of the same size, so the entry at a position is recognised by a few masked
 * word compares against the header learned there, which check its tags, its key's length and
 * bytes and the size of its lengths at once; then only the two lengths are read, and must agree.
 *
 * A match is exactly what [[ExampleWalker.usualEntry]] and [[ExampleWalker.entryValue]] answer
 * for that entry, and the column is what the names answer for its key (the key bytes are
 * compared in full): the tag bytes, the key length byte and the key are the learned ones; `L`
 * and `VL` are each a varint of the learned size, read as [[ProtoWire.delimited]] reads it
 * (two-byte ones included); `L` is `VL` plus the header's bytes after `L`, so the key and the
 * value fill the entry, which ends within `limit`. So reading a record through its matches gives
 * the row, or the give-up, that reading it through those two gives, entry by entry; what is
 * learned only decides how often a match happens, never what a match means. An entry that does
 * not match (another key, a length of another size, an unusual layout) is read the old way.
 *
 * A header of 8 to 16 bytes with one-byte lengths (short keys: most features) is also kept in a
 * tighter form, apart in [[short]] so that a projection's pass over the entries it does not want
 * reads little besides the record. First it is learned whole, lengths included, with the entry's
 * size: while the value's length stays the same (a float, a fixed-length list), two word compares
 * match the entry and its end is known without reading its lengths, so that the next entry's
 * check need not wait for this one's. Equal bytes are the learned header's, which the checks
 * above accepted, with the same lengths: the same answer. The first time the lengths differ (a
 * varint value), the position keeps only the compares above, in two words whose masks are the
 * same for every such header of 10 bytes or more, with `L` and `VL` taken from the words read.
 *
 * What a hostile stream could make this hold stays bounded: positions past [[MaxPositions]] and
 * keys over [[MaxKeyLength]] bytes are not learned, and the long keys' bytes are dropped and
 * learned afresh past [[MaxKeyBytes]].
 */
private[sparktfrecord] final class EntryHeaders {
  import EntryHeaders._

  /**
   * Per position, [[Stride]] longs side by side: the first eight header bytes as a little-endian
   * word and the mask of those compared; the same for the eight bytes ending the header (or the
   * first eight again when it is shorter); the header's length `h` (bits 32-47; 0: none learned),
   * the sizes of `L` (bits 48-55) and `VL` (bits 56-63) and where bytes 8 to `h - 8` of a header
   * longer than 16 lie in [[middles]] (low 32 bits); the column. A header shorter than eight
   * bytes is compared in one word, which the entry after it (or the next record) fills.
   */
  private var state = new Array[Long](16 * Stride)
  /**
   * Per position, [[ShortStride]] longs: for a header learned whole, its first eight bytes and its
   * last eight as little-endian words, then `((h - 8) << 32) | size`, the entry's size in bytes;
   * for one whose lengths vary, the two masked words of [[state]], then `(h - 8) << 32`; in the
   * third, bit 63 set when the entry stands for a column, and 0 for any other header.
   */
  private var short = new Array[Long](16 * ShortStride)
  private var middles = new Array[Byte](256)
  private var used = 0

  private var unwanted = false

  /**
   * Whether an entry standing for no column was ever learned: until one is, every learned entry
   * is wanted and [[passUnwanted]] would pass none, so the reader need not call it.
   */
  def learnedUnwanted: Boolean = unwanted

  /**
   * The entry at `at` (position `position` of its record), ending at most at `limit`, when its
   * header is the one learned at that position: `(valueStart << 32) | entryEnd`; else -1.
   */
  def entryAt(position: Int, buf: Array[Byte], at: Int, limit: Int): Long = {
    val s = position * Stride
    val state = this.state
    if (s >= state.length) return -1L
    val meta = state(s + 4)
    val h = (meta >>> 32).toInt & 0xffff
    // The two words read lie in [at, at + max(h, 8)), before limit.
    val second = if (h > 8) h - 8 else 0
    if (h == 0 || at > limit - 8 - second) return -1L
    val base = Platform.BYTE_ARRAY_OFFSET + at
    if (((Platform.getLong(buf, base) ^ state(s)) & state(s + 1)) != 0L) return -1L
    if (((Platform.getLong(buf, base + second) ^ state(s + 2)) & state(s + 3)) != 0L) return -1L
    if (h > 16 && !ProtoWire.sameBytes(middles, meta.toInt, buf, at + 8, h - 16)) return -1L
    val lengthBytes = (meta >>> 48).toInt & 0xff
    val valueLengthBytes = (meta >>> 56).toInt
    val l = varint(buf, at + 1, lengthBytes)
    val vl = varint(buf, at + h - valueLengthBytes, valueLengthBytes)
    if (vl < 0 || l - vl != h - 1 - lengthBytes) return -1L
    val entryEnd = at + 1 + lengthBytes + l
    if (entryEnd > limit) return -1L
    ((at + h).toLong << 32) | entryEnd
  }

  /**
   * The short header `short(u, u + 3)` = `meta`, learned at the position of the entry at `at`
   * (at most `limit - 16`): the entry's end when it matches, as [[entryAt]] would; else -1.
   */
  private def shortEnd(u: Int, meta: Long, buf: Array[Byte], at: Int, limit: Int): Int = {
    val short = this.short
    val second = (meta >>> 32).toInt & 0xff
    val base = Platform.BYTE_ARRAY_OFFSET + at
    val first = Platform.getLong(buf, base)
    val last = Platform.getLong(buf, base + second)
    val size = meta.toInt
    var end = -1
    if (size != 0) {
      if (first == short(u) && last == short(u + 1)) end = at + size
    } else if ((((first ^ short(u)) & FirstWordMask) | ((last ^ short(u + 1)) & LastWordMask)) ==
        0L) {
      val l = (first >> 8).toByte // L and VL as signed bytes, as entryAt reads them
      val vl = (last >> 56).toInt
      if (vl >= 0 && l - vl == second + 6) end = at + 2 + l
    }
    if (end > limit) -1 else end
  }

  /**
   * Passes the entries from position `position` at `at` on that match their learned headers and
   * stand for no column (a projection's unwanted entries), each checked as [[entryAt]] checks it
   * and its value never looked at: `(p << 32) | q` of the first entry not passed, at position `p`
   * and offset `q` (`limit`, a wanted entry's, or one to read the old way), the bits inverted
   * when that entry did not match its header (so the caller does not check it again).
   */
  def passUnwanted(position: Int, buf: Array[Byte], at: Int, limit: Int): Long = {
    val short = this.short
    var p = position
    var q = at
    while (q < limit) {
      val u = p * ShortStride
      val meta = if (u < short.length) short(u + 2) else 0L
      if (meta < 0L) return (p.toLong << 32) | q // a column's
      val next = if (meta != 0L && q <= limit - 16) shortEnd(u, meta, buf, q, limit) else -1
      if (next >= 0) q = next
      else {
        val s = p * Stride
        if (s >= state.length || state(s + 5) >= 0L) return (p.toLong << 32) | q
        val e = entryAt(p, buf, q, limit)
        if (e < 0) return ~((p.toLong << 32) | q)
        if (meta.toInt != 0 && q <= limit - 16) vary(p)
        q = e.toInt
      }
      p += 1
    }
    (p.toLong << 32) | q
  }

  /**
   * The entry at `position`, its header learned whole, matched [[entryAt]] with lengths of other
   * values: its header's masked words from now on, or only [[entryAt]] when they are not the
   * usual ones.
   */
  private def vary(position: Int): Unit = {
    val s = position * Stride
    val u = position * ShortStride
    val h = (state(s + 4) >>> 32).toInt & 0xffff
    if (h >= 10 && state(s + 1) == FirstWordMask && state(s + 3) == LastWordMask) {
      short(u) = state(s)
      short(u + 1) = state(s + 2)
      short(u + 2) = (short(u + 2) & ColumnBit) | ((h - 8).toLong << 32)
    } else short(u + 2) = 0L
  }

  /** The column of the entry [[entryAt]] recognised at `position`. */
  def column(position: Int): Int = state(position * Stride + 5).toInt

  /**
   * Learns the header of the entry at `at` that [[ExampleWalker.usualEntry]] recognised (its key
   * `buf[keyStart, keyStart + keyLength)`, its value starting at `valueStart`) as position
   * `position`'s, standing for `column`; a header it cannot predict is forgotten instead.
   */
  def learn(
      position: Int,
      buf: Array[Byte],
      at: Int,
      keyStart: Int,
      keyLength: Int,
      valueStart: Int,
      column: Int): Unit = {
    if (position >= MaxPositions) return
    val s = position * Stride
    if (s >= state.length) grow(position + 1)
    val u = position * ShortStride
    short(u + 2) = 0L
    val lengthBytes = keyStart - 3 - at
    val valueLengthBytes = valueStart - (keyStart + keyLength) - 1
    val h = valueStart - at
    if (lengthBytes < 1 || lengthBytes > 2 || valueLengthBytes < 1 || valueLengthBytes > 2 ||
        keyLength > MaxKeyLength) {
      state(s + 4) = 0L
      return
    }
    var middle = 0
    if (h > 16) {
      if (used + h - 16 > middles.length) {
        if (used + h - 16 > MaxKeyBytes) forget()
        if (used + h - 16 > middles.length) {
          middles = java.util.Arrays.copyOf(middles, math.max(middles.length * 2, used + h))
        }
      }
      middle = used
      System.arraycopy(buf, at + 8, middles, middle, h - 16)
      used += h - 16
    }
    val skip1 = 1 // L's bytes and VL's are read, not compared
    val skip2 = 1 + lengthBytes
    val skip3 = h - valueLengthBytes
    val second = if (h > 8) h - 8 else 0
    state(s) = word(buf, at, 0, skip1, skip2, skip3)
    state(s + 1) = mask(0, skip1, skip2, skip3)
    state(s + 2) = word(buf, at, second, skip1, skip2, skip3)
    state(s + 3) = mask(second, skip1, skip2, skip3)
    state(s + 4) = (valueLengthBytes.toLong << 56) | (lengthBytes.toLong << 48) |
      (h.toLong << 32) | middle
    state(s + 5) = column
    if (column < 0) unwanted = true
    if (lengthBytes == 1 && valueLengthBytes == 1 && h >= 8 && h <= 16) {
      short(u) = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + at)
      short(u + 1) = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + at + h - 8)
      short(u + 2) = (if (column >= 0) ColumnBit else 0L) | ((h - 8).toLong << 32) |
        (2 + buf(at + 1))
    }
  }

  private def grow(positions: Int): Unit = {
    val old = state
    state = new Array[Long](math.max(positions, old.length / Stride * 2) * Stride)
    System.arraycopy(old, 0, state, 0, old.length)
    short = java.util.Arrays.copyOf(short, state.length / Stride * ShortStride)
  }

  /** Long keys' bytes filled [[MaxKeyBytes]]: every position is learned afresh. */
  private def forget(): Unit = {
    java.util.Arrays.fill(state, 0L)
    java.util.Arrays.fill(short, 0L)
    used = 0
  }
}

private[sparktfrecord] object EntryHeaders {
  /** Longs per position in [[EntryHeaders]]'s state. */
  final val Stride = 6
  /** Longs per position in [[EntryHeaders]]'s short headers. */
  final val ShortStride = 3
  /** In a short header's third long: the entry stands for a column. */
  final val ColumnBit = 1L << 63
  /**
   * The masks of a header of 10 to 16 bytes with one-byte lengths: its first eight bytes but `L`
   * (byte 1), its last eight but `VL` (the last).
   */
  final val FirstWordMask = 0xffffffffffff00ffL
  final val LastWordMask = 0x00ffffffffffffffL
  final val MaxPositions = 1 << 16
  /** A key's length is one varint byte in the usual layout. */
  final val MaxKeyLength = 127
  final val MaxKeyBytes = 1 << 20

  /** Whether header byte `i` is compared: bytes [`skip2`, `skip3`) and [0, `skip1`) are. */
  private def compared(i: Int, skip1: Int, skip2: Int, skip3: Int): Boolean =
    i < skip1 || (i >= skip2 && i < skip3)

  /** The header's eight bytes from `from` that are compared, as a little-endian word. */
  private def word(buf: Array[Byte], at: Int, from: Int, s1: Int, s2: Int, s3: Int): Long = {
    var w = 0L
    var j = 0
    while (j < 8) {
      if (compared(from + j, s1, s2, s3)) w |= (buf(at + from + j) & 0xffL) << (8 * j)
      j += 1
    }
    w
  }

  private def mask(from: Int, s1: Int, s2: Int, s3: Int): Long = {
    var m = 0L
    var j = 0
    while (j < 8) {
      if (compared(from + j, s1, s2, s3)) m |= 0xffL << (8 * j)
      j += 1
    }
    m
  }

  /**
   * The varint of exactly `n` (1 or 2) bytes at `at`, as [[ProtoWire.delimited]] reads a length:
   * its value, else -1.
   */
  private def varint(buf: Array[Byte], at: Int, n: Int): Int = {
    val b = buf(at)
    if (n == 1) b.toInt
    else {
      val b1 = buf(at + 1)
      if (b >= 0 || b1 < 0) -1 else (b & 0x7f) | (b1 << 7)
    }
  }
}
