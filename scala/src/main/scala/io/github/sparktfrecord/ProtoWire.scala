package io.github.sparktfrecord

import scala.annotation.switch

import org.apache.spark.unsafe.Platform

/**
 * The protobuf wire format, reduced to what `tf.train.Example` and `tf.train.SequenceExample` use.
 *
 * {{{
 * message Example         { Features features = 1; }
 * message SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
 * message Features        { map<string, Feature> feature = 1; }        // entry: key = 1, value = 2
 * message FeatureLists    { map<string, FeatureList> feature_list = 1; }
 * message FeatureList     { repeated Feature feature = 1; }
 * message Feature         { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
 *                                        Int64List int64_list = 3; } }
 * message BytesList { repeated bytes value = 1; }
 * message FloatList { repeated float value = 1 [packed = true]; }
 * message Int64List { repeated int64 value = 1 [packed = true]; }
 * }}}
 *
 * Everything here works on a byte array and positions in it, so that the reader and writer never
 * build protobuf objects. Decoding methods that return two values (a varint and the position after
 * it) leave the position in [[WireCursor]], a mutable holder reused per task.
 */
private[sparktfrecord] object ProtoWire {
  final val WireVarint = 0
  final val WireFixed64 = 1
  final val WireLengthDelimited = 2
  final val WireStartGroup = 3
  final val WireEndGroup = 4
  final val WireFixed32 = 5

  /** `Feature.kind` field numbers, which are also the kinds the schema inferencer tracks. */
  final val KindNone = 0
  final val KindBytes = 1
  final val KindFloat = 2
  final val KindInt64 = 3

  final val KindNames: Array[String] = Array("unset", "bytes_list", "float_list", "int64_list")

  def tag(field: Int, wireType: Int): Int = (field << 3) | wireType

  /** Bytes taken by `value` as an unsigned varint (1 to 10). */
  def varintSize(value: Long): Int = {
    // 64 - leading zeros = significant bits; seven of them per byte, at least one byte.
    val bits = 64 - java.lang.Long.numberOfLeadingZeros(value)
    if (bits == 0) 1 else (bits + 6) / 7
  }

  def varintSize(value: Int): Int = varintSize(value.toLong & 0xffffffffL)

  /** Writes `value` as a varint at `pos`; returns the position after it. */
  def writeVarint(buf: Array[Byte], pos: Int, value: Long): Int = {
    var p = pos
    var v = value
    while ((v & ~0x7fL) != 0L) {
      buf(p) = ((v & 0x7f) | 0x80).toByte
      v >>>= 7
      p += 1
    }
    buf(p) = v.toByte
    p + 1
  }

  def writeFixed32(buf: Array[Byte], pos: Int, value: Int): Int = {
    buf(pos) = value.toByte
    buf(pos + 1) = (value >>> 8).toByte
    buf(pos + 2) = (value >>> 16).toByte
    buf(pos + 3) = (value >>> 24).toByte
    pos + 4
  }

  def readFixed32(buf: Array[Byte], pos: Int): Int =
    (buf(pos) & 0xff) | ((buf(pos + 1) & 0xff) << 8) | ((buf(pos + 2) & 0xff) << 16) |
      ((buf(pos + 3) & 0xff) << 24)

  def readFixed64(buf: Array[Byte], pos: Int): Long =
    (readFixed32(buf, pos).toLong & 0xffffffffL) | (readFixed32(buf, pos + 4).toLong << 32)

  /** Whether the JVM stores numbers little end first, as the wire format does. */
  val LittleEndian: Boolean = java.nio.ByteOrder.nativeOrder == java.nio.ByteOrder.LITTLE_ENDIAN

  /** Whether eight bytes of an array may be read as one little-endian long. */
  val WordReads: Boolean = LittleEndian && Platform.unaligned()

  /** The continuation bits of eight bytes read as one long. */
  final val HighBits = 0x8080808080808080L

  /** The low seven bits of each of eight varint bytes, first byte lowest, joined: 56 bits. */
  def groups(word: Long): Long = {
    var x = word & 0x7f7f7f7f7f7f7f7fL
    x = ((x & 0x7f007f007f007f00L) >>> 1) | (x & 0x007f007f007f007fL)
    x = ((x & 0x3fff00003fff0000L) >>> 2) | (x & 0x00003fff00003fffL)
    ((x & 0x0fffffff00000000L) >>> 4) | (x & 0x000000000fffffffL)
  }

  /** The number of varints in a packed run: every byte without the continuation bit ends one. */
  def countVarints(buf: Array[Byte], from: Int, until: Int): Int = {
    var n = 0
    var p = from
    if (WordReads) {
      val lastWord = math.min(until, buf.length) - 8
      while (p <= lastWord) {
        n += java.lang.Long.bitCount(~Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + p) &
          HighBits)
        p += 8
      }
    }
    while (p < until) {
      if (buf(p) >= 0) n += 1
      p += 1
    }
    n
  }
}

/**
 * A position in a message being decoded, with the bounds it may not cross. One per task; every
 * failure names the byte offset inside the record, which the caller turns into a file offset.
 */
private[sparktfrecord] final class WireCursor {
  import ProtoWire._

  var buf: Array[Byte] = Array.emptyByteArray
  var pos: Int = 0

  /** Reads a varint at `pos` that must end before `limit`. */
  def readVarint(limit: Int): Long = {
    // Tags, lengths and small values are one byte: that case stays small enough to inline.
    if (pos < limit) {
      val b = buf(pos)
      if (b >= 0) {
        pos += 1
        return b
      }
    }
    readLongVarint(limit)
  }

  private def readLongVarint(limit: Int): Long = {
    // Two and three bytes (lengths, ids below 2^21) byte by byte; longer ones eight bytes at once,
    // where the first byte without a continuation bit ends the varint.
    if (limit - pos >= 3) {
      val b1 = buf(pos + 1)
      if (b1 >= 0) {
        val v = (buf(pos) & 0x7fL) | (b1.toLong << 7)
        pos += 2
        return v
      }
      val b2 = buf(pos + 2)
      if (b2 >= 0) {
        val v = (buf(pos) & 0x7fL) | ((b1 & 0x7fL) << 7) | (b2.toLong << 14)
        pos += 3
        return v
      }
    }
    if (WordReads && pos < limit && buf.length - pos >= 8) {
      val word = Platform.getLong(buf, Platform.BYTE_ARRAY_OFFSET + pos)
      val stops = ~word & HighBits
      if (stops != 0) {
        val bytes = (java.lang.Long.numberOfTrailingZeros(stops) >>> 3) + 1
        if (bytes <= limit - pos) {
          pos += bytes
          return groups(word & (-1L >>> (64 - 8 * bytes)))
        }
      } else if (limit - pos >= 9) {
        // Nine or ten bytes (every negative int64 takes ten): the 10th holds the top bit only.
        val b8 = buf(pos + 8)
        if (b8 >= 0) {
          pos += 9
          return groups(word) | (b8.toLong << 56)
        }
        if (limit - pos >= 10 && buf(pos + 9) >= 0) {
          val b9 = buf(pos + 9)
          pos += 10
          return groups(word) | ((b8 & 0x7fL) << 56) | (b9.toLong << 63)
        }
      }
    }
    var result = 0L
    var shift = 0
    while (shift < 64) {
      if (pos >= limit) throw new WireFormatException(s"varint runs past its message", pos)
      val b = buf(pos)
      pos += 1
      result |= (b & 0x7fL) << shift
      if (b >= 0) return result
      shift += 7
    }
    throw new WireFormatException("varint longer than 10 bytes", pos)
  }

  /** Reads a length prefix and returns the end of the delimited bytes, checked against `limit`. */
  def readLengthEnd(limit: Int): Int = {
    val start = pos
    val len = readVarint(limit)
    if (len < 0 || len > limit - pos) {
      throw new WireFormatException(s"length $len runs past its message", start)
    }
    pos + len.toInt
  }

  /** Skips the value of a field of `wireType` whose tag was just read. */
  def skipField(wireType: Int, limit: Int): Unit = wireType match {
    case WireVarint => readVarint(limit)
    case WireFixed64 => advance(8, limit)
    case WireLengthDelimited => pos = readLengthEnd(limit)
    case WireFixed32 => advance(4, limit)
    case WireStartGroup => skipGroup(limit)
    case _ => throw new WireFormatException(s"invalid wire type $wireType", pos)
  }

  private def advance(n: Int, limit: Int): Unit = {
    if (limit - pos < n) throw new WireFormatException(s"$n-byte field runs past its message", pos)
    pos += n
  }

  private def skipGroup(limit: Int): Unit = {
    var depth = 1
    while (depth > 0) {
      val t = readVarint(limit).toInt
      (t & 7) match {
        case WireStartGroup => depth += 1
        case WireEndGroup => depth -= 1
        case w => skipField(w, limit)
      }
    }
  }
}

/** Malformed protobuf bytes; `position` is the offset inside the record's data. */
private[sparktfrecord] final class WireFormatException(message: String, val position: Int)
  extends RuntimeException(message)

/** Receives the features of an Example or SequenceExample as they are parsed. */
private[sparktfrecord] abstract class FeatureVisitor {
  /**
   * Whether the feature (or feature list) with key `buf[keyOff, keyOff + keyLen)` is wanted:
   * a number >= 0 that is handed back to [[feature]] / [[featureList]], or -1 to skip it
   * without looking inside.
   */
  def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int

  /**
   * One wanted feature (of an Example, or of a SequenceExample's context): `id` is what
   * [[lookup]] returned; the values of `kind` lie in `[start, end)` (read them with
   * [[FeatureLists.scan]]); `kind` is `KindNone` for an unset Feature.
   */
  def feature(id: Int, kind: Int, start: Int, end: Int): Unit

  /**
   * One wanted feature list of a SequenceExample: its `FeatureList` message is `[start, end)`,
   * steps read with [[ExampleWalker.nextStep]].
   */
  def featureList(id: Int, start: Int, end: Int): Unit
}

/**
 * Walks `Example` → `Features` → map entries → `Feature` (and `SequenceExample` → context /
 * `FeatureLists` → `FeatureList` → `Feature`) as protobuf parses them: fields in any order,
 * unknown fields skipped, repeated messages merged, and in a Feature the last kind wins while
 * repeated occurrences of that kind since the last switch concatenate.
 */
private[sparktfrecord] final class ExampleWalker(cursor: WireCursor) {
  import ProtoWire._

  /** After [[featureKind]]: where the values of the winning kind start. */
  var runStart: Int = 0

  /** Visits every feature of the Example in `data[0, length)`. */
  def walkExample(data: Array[Byte], length: Int, visitor: FeatureVisitor): Unit = {
    cursor.buf = data
    cursor.pos = 0
    while (cursor.pos < length) {
      val t = cursor.readVarint(length)
      if (t == tag(1, WireLengthDelimited)) { // Example.features
        val end = cursor.readLengthEnd(length)
        walkMap(end, visitor, lists = false)
      } else {
        cursor.skipField(t.toInt & 7, length)
      }
    }
  }

  /** Visits the context features and the feature lists of the SequenceExample in `data`. */
  def walkSequenceExample(data: Array[Byte], length: Int, visitor: FeatureVisitor): Unit = {
    cursor.buf = data
    cursor.pos = 0
    while (cursor.pos < length) {
      val t = cursor.readVarint(length)
      if (t == tag(1, WireLengthDelimited) || t == tag(2, WireLengthDelimited)) {
        val end = cursor.readLengthEnd(length)
        walkMap(end, visitor, lists = t == tag(2, WireLengthDelimited))
      } else {
        cursor.skipField(t.toInt & 7, length)
      }
    }
  }

  /** Features or FeatureLists, from the cursor to `end`: map entries { key = 1, value = 2 }. */
  private def walkMap(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == tag(1, WireLengthDelimited)) {
        val entryEnd = cursor.readLengthEnd(end)
        walkEntry(entryEnd, visitor, lists)
        cursor.pos = entryEnd
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
  }

  private def walkEntry(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
    // Key and value may come in either order, or be missing (then "" and an empty message).
    var keyStart = cursor.pos
    var keyEnd = cursor.pos
    var valueStart = end
    var valueEnd = end
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == tag(1, WireLengthDelimited)) {
        keyEnd = cursor.readLengthEnd(end)
        keyStart = cursor.pos
        cursor.pos = keyEnd
      } else if (t == tag(2, WireLengthDelimited)) {
        valueEnd = cursor.readLengthEnd(end)
        valueStart = cursor.pos
        cursor.pos = valueEnd
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
    // Unwanted features are skipped here, before their values are looked at.
    val id = visitor.lookup(cursor.buf, keyStart, keyEnd - keyStart)
    if (id >= 0) {
      if (lists) {
        visitor.featureList(id, valueStart, valueEnd)
      } else {
        val kind = featureKind(valueStart, valueEnd)
        visitor.feature(id, kind, runStart, valueEnd)
      }
    }
  }

  /** After [[featureKind]]: how many list messages the run holds, and the last one's content. */
  var runLists: Int = 0
  var listStart: Int = 0
  var listEnd: Int = 0

  /**
   * The kind of the Feature message `[start, end)`: the last of its oneof fields. Sets
   * [[runStart]] to where the run of that kind begins, and [[runLists]], [[listStart]],
   * [[listEnd]].
   */
  def featureKind(start: Int, end: Int): Int = {
    cursor.pos = start
    var kind = KindNone
    runStart = end
    runLists = 0
    while (cursor.pos < end) {
      val tagPos = cursor.pos
      val t = cursor.readVarint(end)
      val field = t >>> 3
      if (field >= KindBytes && field <= KindInt64) {
        if ((t & 7) != WireLengthDelimited) {
          throw new WireFormatException(s"Feature field $field has wire type ${t & 7}", tagPos)
        }
        if (field != kind) { kind = field.toInt; runStart = tagPos; runLists = 0 }
        listEnd = cursor.readLengthEnd(end)
        listStart = cursor.pos
        runLists += 1
        cursor.pos = listEnd
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
    kind
  }

  /** The number of steps (Feature messages) in the FeatureList `[start, end)`. */
  def countSteps(start: Int, end: Int): Int = {
    cursor.pos = start
    var n = 0
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == tag(1, WireLengthDelimited)) n += 1
      cursor.skipField(t.toInt & 7, end)
    }
    n
  }

  /**
   * Finds the next step of a FeatureList at or after `from` and before `end`: returns the end of
   * its Feature message and sets [[stepStart]], or returns -1 when there is none.
   */
  def nextStep(from: Int, end: Int): Int = {
    cursor.pos = from
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == tag(1, WireLengthDelimited)) {
        val stepEnd = cursor.readLengthEnd(end)
        stepStart = cursor.pos
        return stepEnd
      }
      cursor.skipField(t.toInt & 7, end)
    }
    -1
  }

  /** After [[nextStep]]: where the step's Feature message starts. */
  var stepStart: Int = 0
}

/** Receives the values of one feature list, in order. */
private[sparktfrecord] abstract class ValueSink {
  def int64(v: Long): Unit
  def float(v: Float): Unit
  def bytes(buf: Array[Byte], off: Int, len: Int): Unit

  /** `count` packed little-endian floats at `buf[off]`; a sink may copy them in one go. */
  def floats(buf: Array[Byte], off: Int, count: Int): Unit = {
    var i = 0
    while (i < count) {
      float(java.lang.Float.intBitsToFloat(ProtoWire.readFixed32(buf, off + 4 * i)))
      i += 1
    }
  }
}

/**
 * Walks the list messages of one kind inside a Feature (or a run of them), accepting packed and
 * unpacked encodings. With a null sink it only counts, without decoding packed values.
 */
private[sparktfrecord] final class FeatureLists(cursor: WireCursor) {
  import FeatureLists._
  import ProtoWire._

  /**
   * After a [[scan]]: how many `value` fields it met. When that is one (a packed run, as
   * TensorFlow writes, or a single value), [[emitSingle]] hands the values over without a second
   * walk through the Feature.
   */
  var fields: Int = 0
  private var lastCase = 0
  private var lastStart = 0
  private var lastEnd = 0

  /**
   * Counts the values of `kind` in the content `[start, end)` of a run's only list message when
   * it is encoded as TensorFlow encodes it, and leaves [[emitSingle]] ready: nothing, or one
   * `value` field (a packed run, or one bytes value) spanning the list. Else -1, for [[scan]]
   * to count them (and to report what is malformed).
   */
  def countSingleList(kind: Int, start: Int, end: Int): Int = {
    fields = 0
    if (start == end) return 0
    val buf = cursor.buf
    if (buf(start) != ((1 << 3) | WireLengthDelimited)) return -1
    cursor.pos = start + 1
    if (cursor.readLengthEnd(end) != end) return -1
    val len = end - cursor.pos
    lastStart = cursor.pos
    lastEnd = end
    fields = 1
    (kind: @switch) match {
      case KindFloat =>
        if ((len & 3) != 0) return -1
        lastCase = FloatPacked
        len >> 2
      case KindInt64 =>
        if (len > 0 && buf(end - 1) < 0) return -1
        lastCase = Int64Packed
        countVarints(buf, lastStart, end)
      case _ =>
        lastCase = BytesValue
        1
    }
  }

  /** Counts (with a null sink) or hands over the values of `kind` in `[start, end)`. */
  def scan(kind: Int, start: Int, end: Int, sink: ValueSink): Int = {
    var n = 0
    fields = 0
    cursor.pos = start
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if ((t >>> 3) == kind) {
        val listEnd = cursor.readLengthEnd(end)
        while (cursor.pos < listEnd) {
          val vt = cursor.readVarint(listEnd)
          if ((vt >>> 3) == 1) {
            n += values(kind, (vt & 7).toInt, listEnd, sink)
            fields += 1
          } else {
            cursor.skipField(vt.toInt & 7, listEnd)
          }
        }
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
    n
  }

  /** After a counting [[scan]] that met one `value` field: its `count` values into `sink`. */
  def emitSingle(sink: ValueSink, count: Int): Unit = {
    val buf = cursor.buf
    (lastCase: @switch) match {
      case Int64Packed | Int64Single =>
        cursor.pos = lastStart
        while (cursor.pos < lastEnd) sink.int64(cursor.readVarint(lastEnd))
      case FloatPacked | FloatSingle => sink.floats(buf, lastStart, count)
      case _ => sink.bytes(buf, lastStart, lastEnd - lastStart)
    }
  }

  /** One occurrence of the list's `value` field (a packed run or a single value). */
  private def values(kind: Int, wireType: Int, end: Int, sink: ValueSink): Int = {
    val buf = cursor.buf
    val at = cursor.pos
    lastCase = (kind << 3) | wireType
    (lastCase: @switch) match {
      case Int64Packed =>
        val runEnd = cursor.readLengthEnd(end)
        lastStart = cursor.pos
        lastEnd = runEnd
        if (sink == null) {
          if (runEnd > cursor.pos && buf(runEnd - 1) < 0) {
            throw new WireFormatException("packed int64 run ends inside a varint", runEnd - 1)
          }
          val n = countVarints(buf, cursor.pos, runEnd)
          cursor.pos = runEnd
          n
        } else {
          var n = 0
          while (cursor.pos < runEnd) {
            sink.int64(cursor.readVarint(runEnd))
            n += 1
          }
          n
        }
      case Int64Single =>
        lastStart = at
        val v = cursor.readVarint(end)
        lastEnd = cursor.pos
        if (sink != null) sink.int64(v)
        1
      case FloatPacked =>
        val runEnd = cursor.readLengthEnd(end)
        val len = runEnd - cursor.pos
        if ((len & 3) != 0) throw new WireFormatException(s"packed float run of $len bytes", at)
        lastStart = cursor.pos
        if (sink != null) sink.floats(buf, cursor.pos, len >> 2)
        cursor.pos = runEnd
        len >> 2
      case FloatSingle =>
        if (end - cursor.pos < 4) throw new WireFormatException("float runs past its list", at)
        lastStart = at
        if (sink != null) sink.float(java.lang.Float.intBitsToFloat(readFixed32(buf, cursor.pos)))
        cursor.pos += 4
        1
      case BytesValue =>
        val valueEnd = cursor.readLengthEnd(end)
        lastStart = cursor.pos
        lastEnd = valueEnd
        if (sink != null) sink.bytes(buf, cursor.pos, valueEnd - cursor.pos)
        cursor.pos = valueEnd
        1
      case _ =>
        throw new WireFormatException(s"${KindNames(kind)} value with wire type $wireType", at)
    }
  }
}

private[sparktfrecord] object FeatureLists {
  // (kind << 3) | wire type of a list's value field, as constants so the match is a tableswitch.
  final val Int64Packed = 26 // KindInt64, length-delimited
  final val Int64Single = 24 // KindInt64, varint
  final val FloatPacked = 18 // KindFloat, length-delimited
  final val FloatSingle = 21 // KindFloat, fixed32
  final val BytesValue = 10 // KindBytes, length-delimited
}
