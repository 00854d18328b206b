package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.array.ByteArrayMethods

import io.github.sparktfrecord.wire.{EntryHeaders, ExampleWalker, FeatureOrder, PackedVarints}
import io.github.sparktfrecord.wire.ProtoWire

/**
 * The fast path: reads an `Example` record laid out the usual way (as TensorFlow and every writer
 * lay it out), with one [[UsualLayoutReader.ColumnReader]] per column chosen once per schema, for
 * the column's type and shape. It walks the record itself: `Example.features` as one field, its
 * map entries laid out `0A len 0A keyLen key 12 len Feature`, names recognised by position
 * ([[FeatureOrder]], shared with the general path); each wanted column's reader then reads the
 * usual Feature: one list of the column's kind holding one `value` field (packed numbers), or a
 * bytes list of plain values, or an empty list.
 *
 * On anything else (another layout, an unset Feature, another kind, unpacked values, a value the
 * column cannot hold, a decimal, vector or `array<array<T>>` column present in the record) it
 * gives up: [[read]] returns false, having perhaps written part of the row, and
 * [[ExampleDeserializer]] has the general path ([[AnyLayoutReader]]) read the record again,
 * whole. It never throws on a record's bytes: what is wrong with a record is the general path's to
 * say.
 *
 * Each entry is first looked for where the previous records had it ([[EntryHeaders]], the layout
 * prediction): its header compared in a few masked words with the one learned at its position,
 * its column known from there, its value read straight from where it lies. An entry that does
 * not match is read by the walk (recognised, its key looked up) and teaches its header to the
 * prediction; so a record that differs anywhere costs the walk plus one check per differing
 * entry, and a file whose keys keep changing order stops predicting (see [[judge]]).
 *
 * A projection (10 of 1,000 features) does not skip the entries it does not want: it checks each
 * one's header and key and never looks at its value. Skipping them would change results. The walk
 * gives up on an unwanted entry laid out in an unusual way, and the general path then reads the
 * record or names what is wrong with it; a key damaged into a wanted column's name sets that
 * column; neither shows in the record's length or in the wanted entries' headers. Checking an
 * unwanted entry is two word compares and two length bytes, against the walk's recognition and
 * lookup; with a short key, two word compares alone while its value's length stays the same,
 * its lengths compared in those words ([[EntryHeaders]]).
 */
private[sparktfrecord] final class UsualLayoutReader(row: RowBuilder, order: FeatureOrder) {
  import ExampleWalker._
  import UsualLayoutReader._

  private val readers: Array[ColumnReader] =
    row.columnWriters.map(w => UsualLayoutReader.reader(w, row.writer))

  /** The entry headers of the previous records by position: the layout prediction. */
  private val headers = new EntryHeaders
  /** Whether entries are predicted; the entries read, and those the prediction missed. */
  private var predicting = true
  private var entries = 0L
  private var missed = 0L

  /** Whether the next record's entries are predicted from the previous records'. */
  def predicts: Boolean = predicting

  /** Reads the record `buf[start, end)` into the row begun for it; false: it gave up. */
  def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
    val readers = this.readers
    val headers = this.headers
    val predicting = this.predicting
    var misses = 0
    var position = 0
    var p = start
    while (p < end) {
      val features = usualField(buf, p, end, FeaturesTag)
      if (features < 0) return false
      var q = (features >>> 32).toInt
      val mapEnd = features.toInt
      while (q < mapEnd) {
        // The entry where the previous records had it: a few word compares (EntryHeaders says
        // why a match is what the walk below answers); else the walk, which the entry teaches.
        // Unwanted entries that match are passed in one tight loop, once the file has any.
        var predicted = -1L
        if (predicting) {
          if (headers.learnedUnwanted) {
            var passed = headers.passUnwanted(position, buf, q, mapEnd)
            val missedHere = passed < 0
            if (missedHere) passed = ~passed
            position = (passed >>> 32).toInt
            q = passed.toInt
            if (!missedHere && q < mapEnd) predicted = headers.entryAt(position, buf, q, mapEnd)
          } else predicted = headers.entryAt(position, buf, q, mapEnd)
        }
        if (q < mapEnd) {
          var id = 0
          var valueStart = 0
          var entryEnd = 0
          if (predicted >= 0) {
            id = headers.column(position)
            valueStart = (predicted >>> 32).toInt
            entryEnd = predicted.toInt
          } else {
            val entry = usualEntry(buf, q, mapEnd)
            if (entry < 0) return false
            val keyStart = (entry >>> 32).toInt
            val keyLength = buf(keyStart - 1)
            entryEnd = entry.toInt
            id = order.at(position, buf, keyStart, keyLength)
            valueStart = entryValue(buf, keyStart + keyLength, entryEnd)
            if (predicting) {
              headers.learn(position, buf, q, keyStart, keyLength, valueStart, id)
              misses += 1
            }
          }
          position += 1
          // Ordinals past the columns' are a vector's sparse features: the general path's.
          if (id >= readers.length) return false
          if (id >= 0) {
            row.set(id)
            if (!readers(id).read(buf, valueStart, entryEnd)) return false
          }
          q = entryEnd
        }
      }
      p = mapEnd
    }
    if (predicting) judge(position, misses)
    true
  }

  /**
   * The give-up rule of the prediction: once more than half the entries of at least
   * [[MinPredictedEntries]] missed it (a file whose keys change order), this reader stops
   * predicting, so that such a file pays the check and the learning only briefly.
   */
  private def judge(read: Int, misses: Int): Unit = {
    entries += read
    missed += misses
    if (entries >= MinPredictedEntries && 2 * missed > entries) predicting = false
  }
}

private[sparktfrecord] object UsualLayoutReader {
  import ColumnWriter._
  /** The fewest entries the prediction's give-up rule judges it on. */
  final val MinPredictedEntries = 4096

  import ExampleWalker._
  import TypeTable._

  /** The reader of column `w`'s usual Feature, chosen from its shape and its type's entry. */
  def reader(w: ColumnWriter, row: UnsafeRowWriter): ColumnReader = w.shape match {
    case ShapeScalar => scalarReader(w.entry, row, w.ordinal)
    case ShapeArray => arrayReader(w.entry, row, w.ordinal, w.arrayWriter)
    case _ => GiveUp // a vector, or array<array<T>> (feature lists): the general path's
  }

  private def scalarReader(entry: TypeEntry, row: UnsafeRowWriter, o: Int): ColumnReader =
    entry match {
      case LongEntry | TimestampEntry | TimestampNTZEntry => new LongScalar(row, o)
      case IntegerEntry | DateEntry => new IntScalar(row, o)
      case ShortEntry => new ShortScalar(row, o)
      case ByteEntry => new ByteScalar(row, o)
      case BooleanEntry => new BooleanScalar(row, o)
      case FloatTypeEntry => new FloatScalar(row, o, false)
      case DoubleEntry => new FloatScalar(row, o, true)
      case StringEntry | BinaryEntry => new BytesScalar(row, o)
      case _ => GiveUp // a decimal
    }

  private def arrayReader(
      entry: TypeEntry,
      row: UnsafeRowWriter,
      o: Int,
      aw: UnsafeArrayWriter): ColumnReader = entry match {
    case LongEntry | TimestampEntry | TimestampNTZEntry => new LongArray(row, o)
    case IntegerEntry | DateEntry => new IntArray(row, o, aw)
    case ShortEntry => new ShortArray(row, o, aw)
    case ByteEntry => new ByteArray(row, o, aw)
    case BooleanEntry => new BooleanArray(row, o, aw)
    case FloatTypeEntry => new FloatArray(row, o, aw)
    case DoubleEntry => new DoubleArray(row, o, aw)
    case StringEntry | BinaryEntry => new BytesArray(row, o, aw)
    case _ => GiveUp // decimals
  }

  /** The most bytes of elements an array may hold, as `UnsafeArrayWriter` allows. */
  private final val MaxArrayBytes = ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH.toLong

  /** What [[values]] answers for an empty list (no values: a null scalar, an empty array). */
  private final val Empty = -2L

  /**
   * The `value` field of the usual Feature `buf[start, end)`, one list of the kind whose tag is
   * `listTag`: `(start << 32) | end`; [[Empty]] for an empty list; else -1.
   */
  private def values(buf: Array[Byte], start: Int, end: Int, listTag: Int): Long = {
    // The commonest Feature, `listTag L 0A n values` with one-byte lengths filling it, is four
    // bytes known from its length alone: one compare answers what the recognisers below would.
    val n = end - start - 4
    if (n >= 0 && n < 126) {
      val head = listTag | ((n + 2) << 8) | (ListValueTag << 16) | (n << 24)
      if (Platform.getInt(buf, Platform.BYTE_ARRAY_OFFSET + start) == head) {
        return ((start + 4).toLong << 32) | end
      }
    } else if (n >= 130 && n < 16379 && ProtoWire.WordReads) {
      // A list of 128 to 16,376 bytes (32 floats or more: an embedding) has two-byte lengths,
      // `listTag L L 0A n n values`: six bytes, compared in one masked word.
      val m = n - 2
      val l = m + 3
      val head = listTag.toLong | ((l & 0x7f | 0x80).toLong << 8) | ((l >>> 7).toLong << 16) |
        (ListValueTag.toLong << 24) | ((m & 0x7f | 0x80).toLong << 32) | ((m >>> 7).toLong << 40)
      if ((Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + start) & 0xffffffffffffL) == head) {
        return ((start + 6).toLong << 32) | end
      }
    }
    val list = usualList(buf, start, end, listTag)
    if (list < 0) -1L
    else if ((list >>> 32).toInt == end) Empty
    else usualValue(buf, (list >>> 32).toInt, end)
  }

  /** Reads one column's usual Feature `buf[start, end)` into the row; false: it gives up. */
  abstract class ColumnReader extends PackedVarints {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean

    /**
     * Begins at the row's cursor an array of `count` elements of `bytes` bytes in all, none null
     * (what `UnsafeArrayWriter.initialize` writes, without its calls): the index in the row's
     * buffer where its elements go, which the caller fills; -1 past an array's largest size.
     */
    protected final def beginArray(row: UnsafeRowWriter, count: Int, bytes: Long): Int = {
      val header = 8 + (((count + 63) >>> 6) << 3)
      val fixed = (bytes + 7) & ~7L
      if (fixed > MaxArrayBytes) return -1
      row.grow(header + fixed.toInt)
      val b = row.getBuffer
      val at = row.cursor()
      Platform.putLong(b, at, count.toLong)
      var i = 8
      while (i < header) { Platform.putLong(b, at + i, 0L); i += 8 }
      // The padding after the last element is zero, as in every `UnsafeArrayData`.
      if (fixed > 0) Platform.putLong(b, at + header + fixed - 8, 0L)
      row.increaseCursor(header + fixed.toInt)
      at + header - Platform.BYTE_ARRAY_OFFSET
    }

    /** Set by [[int64]]: the value of a scalar's one varint. */
    protected final var value = 0L

    /**
     * The one value of a scalar's packed int64 run, into [[value]]: 1; 0 for an empty list (the
     * scalar is null); -1 for anything else.
     */
    protected final def int64(buf: Array[Byte], start: Int, end: Int): Int = {
      val f = values(buf, start, end, Int64ListTag)
      if (f == Empty) return 0
      if (f < 0) return -1
      val from = (f >>> 32).toInt
      val to = f.toInt
      if (from == to || buf(to - 1) < 0) return -1
      val n = to - from
      if (n <= 8 && ProtoWire.WordReads && from <= buf.length - 8) {
        // One varint fills the run, so its length is known: its bytes are taken in one word
        // and their 7-bit groups joined without a branch on that length, which varies from
        // record to record (a value's 4 or 5 bytes) and would be mispredicted. Any other
        // continuation bits make a varint that ends before `to`, which the loop below refuses.
        val keep = -1L >>> (64 - 8 * n)
        val w = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + from) & keep
        val high = ProtoWire.HighBits
        if ((w & high) != (high & (keep >>> 8))) return -1
        value = ProtoWire.groups(w)
        return 1
      }
      value = varint(buf, from)
      if (varintEnd == to) 1 else -1
    }

    /**
     * The packed int64 run of an array column's usual Feature, counted and its array begun: the
     * run's start, or -1 (also when it does not end on a varint's last byte). An empty list is
     * an empty array: the run's end.
     */
    protected final def beginInt64Array(
        aw: UnsafeArrayWriter,
        buf: Array[Byte],
        start: Int,
        end: Int): Int = {
      val f = values(buf, start, end, Int64ListTag)
      if (f == Empty) {
        aw.initialize(0)
        return end
      }
      if (f < 0 || f.toInt == (f >>> 32).toInt || buf(f.toInt - 1) < 0) return -1
      val from = (f >>> 32).toInt
      aw.initialize(ProtoWire.countVarints(buf, from, f.toInt))
      from
    }
  }

  /** A column the fast path does not read (decimal, vector, `array<array<T>>`): it gives up. */
  object GiveUp extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = false
  }

  /**
   * A scalar column's reader: its value goes into the field's 8-byte slot, as one word whose
   * low bytes are the value's and the others zero, which is what `UnsafeRowWriter.write` puts
   * there in two writes. The slot's offset is the row writer's for the field, taken once: the
   * row builder's writer is a top-level one, whose fields start where its buffer starts.
   */
  abstract class ScalarReader(row: UnsafeRowWriter, ordinal: Int) extends ColumnReader {
    private val slot = row.getFieldOffset(ordinal)

    protected final def put(bits: Long): Unit = Platform.putLong(row.getBuffer, slot, bits)
  }

  final class LongScalar(row: UnsafeRowWriter, ordinal: Int) extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = int64(buf, start, end) match {
      case 1 => put(value); true
      case 0 => row.setNullAt(ordinal); true
      case _ => false
    }
  }

  final class IntScalar(row: UnsafeRowWriter, ordinal: Int) extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = int64(buf, start, end) match {
      case 1 => value == value.toInt && { put(value & 0xffffffffL); true }
      case 0 => row.setNullAt(ordinal); true
      case _ => false
    }
  }

  final class ShortScalar(row: UnsafeRowWriter, ordinal: Int) extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = int64(buf, start, end) match {
      case 1 => value == value.toShort && { put(value & 0xffffL); true }
      case 0 => row.setNullAt(ordinal); true
      case _ => false
    }
  }

  final class ByteScalar(row: UnsafeRowWriter, ordinal: Int) extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = int64(buf, start, end) match {
      case 1 => value == value.toByte && { put(value & 0xffL); true }
      case 0 => row.setNullAt(ordinal); true
      case _ => false
    }
  }

  final class BooleanScalar(row: UnsafeRowWriter, ordinal: Int) extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = int64(buf, start, end) match {
      case 1 => (value == 0L || value == 1L) && { put(value); true }
      case 0 => row.setNullAt(ordinal); true
      case _ => false
    }
  }

  /** A float or double scalar: one packed float. */
  final class FloatScalar(row: UnsafeRowWriter, ordinal: Int, double: Boolean)
    extends ScalarReader(row, ordinal) {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val f = values(buf, start, end, FloatListTag)
      if (f == Empty) { row.setNullAt(ordinal); return true }
      if (f < 0 || f.toInt - (f >>> 32).toInt != 4) return false
      val from = Platform.BYTE_ARRAY_OFFSET + (f >>> 32)
      if (double) put(java.lang.Double.doubleToRawLongBits(Platform.getFloat(buf, from).toDouble))
      else put(Platform.getInt(buf, from) & 0xffffffffL)
      true
    }
  }

  /** A string or binary scalar: one bytes value. */
  final class BytesScalar(row: UnsafeRowWriter, ordinal: Int) extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val f = values(buf, start, end, BytesListTag)
      if (f == Empty) { row.setNullAt(ordinal); return true }
      if (f < 0) return false
      val from = (f >>> 32).toInt
      val len = f.toInt - from
      val rounded = (len + 7) & ~7
      row.grow(rounded)
      val at = row.cursor()
      val b = row.getBuffer
      if (rounded > 0) Platform.putLong(b, at + rounded - 8, 0L)
      System.arraycopy(buf, from, b, at - Platform.BYTE_ARRAY_OFFSET, len)
      // Its size is `len`; the cursor then passes the padding.
      row.increaseCursor(len)
      row.setOffsetAndSizeFromPreviousCursor(ordinal, at)
      row.increaseCursor(rounded - len)
      true
    }
  }

  /**
   * An int64 array: the packed run's varints decoded straight into the array's elements. A run of
   * at most 64 bytes holds at most 64 values, so one word of null bits whatever their count: its
   * values are decoded first, counted as they go, and the header is written after them. A longer
   * run is counted first, for the size of its header.
   */
  final class LongArray(row: UnsafeRowWriter, ordinal: Int) extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val f = values(buf, start, end, Int64ListTag)
      val arrayStart = row.cursor()
      if (f == Empty) beginArray(row, 0, 0)
      else {
        val from = (f >>> 32).toInt
        val to = f.toInt
        if (f < 0 || from == to || buf(to - 1) < 0) return false
        if (to - from <= 64) {
          row.grow(16 + 8 * (to - from))
          val last = decode(buf, from, to, arrayStart + 16)
          if (last < 0) return false
          val b = row.getBuffer
          Platform.putLong(b, arrayStart, ((last - arrayStart - 16) >>> 3).toLong)
          Platform.putLong(b, arrayStart + 8, 0L)
          row.increaseCursor(last - arrayStart)
        } else {
          val count = ProtoWire.countVarints(buf, from, to)
          val at = beginArray(row, count, 8L * count)
          if (at < 0 || decode(buf, from, to, Platform.BYTE_ARRAY_OFFSET + at) < 0) return false
        }
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }

    /**
     * The run `buf[from, to)`, which ends on a varint's last byte, decoded into 8-byte elements
     * from offset `at` of the row's buffer, which has room for them: the offset after the last;
     * -1 for a varint longer than ten bytes.
     */
    private def decode(buf: Array[Byte], from: Int, to: Int, at: Int): Int = {
      val b = row.getBuffer
      var p = from
      var q = at
      while (p < to) {
        val c = buf(p)
        if (c >= 0) { Platform.putLong(b, q, c.toLong); p += 1 }
        else {
          val v = varint(buf, p)
          if (varintEnd < 0) return -1
          Platform.putLong(b, q, v)
          p = varintEnd
        }
        q += 8
      }
      q
    }
  }

  final class IntArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val arrayStart = row.cursor()
      var p = beginInt64Array(aw, buf, start, end)
      if (p < 0) return false
      var i = 0
      while (p < end) {
        val v = varint(buf, p)
        if (varintEnd < 0 || v != v.toInt) return false
        aw.write(i, v.toInt)
        p = varintEnd
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  final class ShortArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val arrayStart = row.cursor()
      var p = beginInt64Array(aw, buf, start, end)
      if (p < 0) return false
      var i = 0
      while (p < end) {
        val v = varint(buf, p)
        if (varintEnd < 0 || v != v.toShort) return false
        aw.write(i, v.toShort)
        p = varintEnd
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  final class ByteArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val arrayStart = row.cursor()
      var p = beginInt64Array(aw, buf, start, end)
      if (p < 0) return false
      var i = 0
      while (p < end) {
        val v = varint(buf, p)
        if (varintEnd < 0 || v != v.toByte) return false
        aw.write(i, v.toByte)
        p = varintEnd
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  /** Booleans: every value one byte, 0 or 1. */
  final class BooleanArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val arrayStart = row.cursor()
      var p = beginInt64Array(aw, buf, start, end)
      if (p < 0) return false
      var i = 0
      while (p < end) {
        val b = buf(p)
        if (b != 0 && b != 1) return false
        aw.write(i, b == 1)
        p += 1
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  /**
   * A float array: the packed little-endian floats copied into the array in one go (the fast
   * path runs where the platform is little-endian, as Spark's arrays then are).
   */
  final class FloatArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val f = values(buf, start, end, FloatListTag)
      val arrayStart = row.cursor()
      if (f == Empty) aw.initialize(0)
      else {
        if (f < 0) return false
        val from = (f >>> 32).toInt
        val len = f.toInt - from
        if (len == 0 || (len & 3) != 0) return false
        val elementsAt = beginArray(row, len >> 2, len)
        if (elementsAt < 0) return false
        System.arraycopy(buf, from, row.getBuffer, elementsAt, len)
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  final class DoubleArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val f = values(buf, start, end, FloatListTag)
      val arrayStart = row.cursor()
      if (f == Empty) aw.initialize(0)
      else {
        if (f < 0) return false
        val from = (f >>> 32).toInt
        val len = f.toInt - from
        if (len == 0 || (len & 3) != 0) return false
        val count = len >> 2
        aw.initialize(count)
        var i = 0
        while (i < count) {
          aw.write(i, Platform.getFloat(buf, Platform.BYTE_ARRAY_OFFSET + from + 4 * i).toDouble)
          i += 1
        }
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }

  /** A string or binary array: a bytes list of plain `value` fields, counted, then copied. */
  final class BytesArray(row: UnsafeRowWriter, ordinal: Int, aw: UnsafeArrayWriter)
    extends ColumnReader {
    def read(buf: Array[Byte], start: Int, end: Int): Boolean = {
      val l = usualList(buf, start, end, BytesListTag)
      if (l < 0) return false
      val from = (l >>> 32).toInt
      var p = from
      var count = 0
      while (p < end) {
        val v = usualField(buf, p, end, ListValueTag)
        if (v < 0) return false
        p = v.toInt
        count += 1
      }
      val arrayStart = row.cursor()
      aw.initialize(count)
      p = from
      var i = 0
      while (i < count) {
        val v = ProtoWire.delimited(buf, p + 1, end)
        val s = (v >>> 32).toInt
        aw.write(i, buf, s, v.toInt - s)
        p = v.toInt
        i += 1
      }
      row.setOffsetAndSizeFromPreviousCursor(ordinal, arrayStart)
      true
    }
  }
}
