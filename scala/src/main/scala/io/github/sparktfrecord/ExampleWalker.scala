package io.github.sparktfrecord

import scala.annotation.switch

/** Receives the features of an Example or SequenceExample as [[ExampleWalker]] parses them. */
private[sparktfrecord] abstract class FeatureVisitor {
  /**
   * Whether the feature (or feature list) with key `buf[keyOff, keyOff + keyLen)` is wanted:
   * a number >= 0 that is handed back to [[feature]] / [[featureList]], or -1 to skip it
   * without looking inside.
   */
  def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int

  /**
   * One wanted feature (of an Example, or of a SequenceExample's context): `id` is what
   * [[lookup]] returned, `run` where its values lie (count them and hand them over with
   * [[FeatureLists]]). The run is reused: it is only valid during this call.
   */
  def feature(id: Int, run: FeatureRun): Unit

  /**
   * One wanted feature list of a SequenceExample: its `FeatureList` message is `[start, end)`,
   * steps read with [[ExampleWalker.nextStep]].
   */
  def featureList(id: Int, start: Int, end: Int): Unit
}

/**
 * The values of one `Feature` message, as [[ExampleWalker.readFeature]] found them: their kind and
 * the run of list messages that hold them. [[FeatureLists.count]] then counts the values and
 * [[FeatureLists.emit]] hands them over. One is reused per task, refilled per Feature.
 */
private[sparktfrecord] final class FeatureRun {
  /** The winning `Feature.kind` (`ProtoWire.KindBytes`, ...); `KindNone` for an unset Feature. */
  var kind: Int = ProtoWire.KindNone
  /** From the first list message of `kind` since the last switch of kind, to the Feature's end. */
  var start: Int = 0
  var end: Int = 0
  /** How many list messages of `kind` the run holds, and the content of the last one. */
  var lists: Int = 0
  var lastListStart: Int = 0
  var lastListEnd: Int = 0

  /** After [[FeatureLists.count]]: the number of values; -1 until they are counted. */
  var count: Int = -1
  /**
   * After [[FeatureLists.count]]: whether the values lie in one `value` field (a packed run, as
   * TensorFlow writes, or a single value), which [[FeatureLists.emit]] then reads directly; its
   * encoding (`(kind << 3) | wire type`) and bytes.
   */
  var singleField: Boolean = false
  var fieldCase: Int = 0
  var fieldStart: Int = 0
  var fieldEnd: Int = 0
}

/**
 * Walks `Example` → `Features` → map entries → `Feature` (and `SequenceExample` → context /
 * `FeatureLists` → `FeatureList` → `Feature`) as protobuf parses them: fields in any order,
 * unknown fields skipped, repeated `features` / `feature_lists` messages merged, a key repeated in
 * a map taken from its last entry, and in a Feature the last kind wins while repeated occurrences
 * of that kind since the last switch concatenate. One difference: a map entry whose `value` field
 * itself occurs twice keeps the last (protobuf would merge the two; TensorFlow rejects the record,
 * and no writer produces one).
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
 */
private[sparktfrecord] final class ExampleWalker(cursor: WireCursor) {
  import ProtoWire._

  private val run = new FeatureRun

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
    val buf = cursor.buf
    var pos = cursor.pos
    while (pos < end) {
      val entryEnd = shortEntryEnd(buf, pos, end)
      if (entryEnd > 0) {
        val keyEnd = pos + 4 + buf(pos + 3)
        dispatch(visitor, lists, pos + 4, keyEnd, keyEnd + 2, entryEnd)
        pos = entryEnd
      } else {
        cursor.pos = pos
        val t = cursor.readVarint(end)
        if (t == tag(1, WireLengthDelimited)) {
          val entryEnd = cursor.readLengthEnd(end)
          walkEntry(entryEnd, visitor, lists)
          cursor.pos = entryEnd
        } else {
          cursor.skipField(t.toInt & 7, end)
        }
        pos = cursor.pos
      }
    }
    cursor.pos = pos
  }

  /**
   * Where the map entry at `pos` ends when it is laid out as writers of small features lay it out,
   * every length one byte: `0A len 0A keyLen key… 12 valueLen value…`, the key and the value
   * each once and filling the entry exactly; else 0. Recognised from a few bytes, so that
   * skipping an unwanted feature costs little more.
   */
  private def shortEntryEnd(buf: Array[Byte], pos: Int, end: Int): Int = {
    if (end - pos < 6 || buf(pos) != tag(1, WireLengthDelimited) ||
        buf(pos + 2) != tag(1, WireLengthDelimited)) {
      return 0
    }
    val entryLen = buf(pos + 1)
    val keyLen = buf(pos + 3)
    if (entryLen < 0 || keyLen < 0) return 0
    val entryEnd = pos + 2 + entryLen
    val valueTag = pos + 4 + keyLen
    // A negative value length byte (a longer varint) cannot pass the last test.
    if (entryEnd > end || entryEnd - valueTag < 2 || buf(valueTag) != tag(2, WireLengthDelimited) ||
        valueTag + 2 + buf(valueTag + 1) != entryEnd) {
      return 0
    }
    entryEnd
  }

  private def walkEntry(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
    // As every writer lays an entry out: the key, then the value, each once, the key shorter than
    // 128 bytes. Recognised from a few bytes, so that unwanted features cost little more.
    val buf = cursor.buf
    val at = cursor.pos
    if (end - at >= 4 && buf(at) == tag(1, WireLengthDelimited) && buf(at + 1) >= 0) {
      val keyEnd = at + 2 + buf(at + 1)
      if (end - keyEnd >= 2 && buf(keyEnd) == tag(2, WireLengthDelimited)) {
        cursor.pos = keyEnd + 1
        if (cursor.readLengthEnd(end) == end) {
          dispatch(visitor, lists, at + 2, keyEnd, cursor.pos, end)
          return
        }
      }
      cursor.pos = at
    }
    walkAnyEntry(end, visitor, lists)
  }

  private def walkAnyEntry(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
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
    dispatch(visitor, lists, keyStart, keyEnd, valueStart, valueEnd)
  }

  private def dispatch(
      visitor: FeatureVisitor,
      lists: Boolean,
      keyStart: Int,
      keyEnd: Int,
      valueStart: Int,
      valueEnd: Int): Unit = {
    // Unwanted features are skipped here, before their values are looked at.
    val id = visitor.lookup(cursor.buf, keyStart, keyEnd - keyStart)
    if (id >= 0) {
      if (lists) {
        visitor.featureList(id, valueStart, valueEnd)
      } else {
        readFeature(valueStart, valueEnd, run)
        visitor.feature(id, run)
      }
    }
  }

  /**
   * Reads the Feature message `[start, end)` into `run`: its kind (the last of its oneof fields)
   * and where the run of that kind lies. The values are not counted yet.
   */
  def readFeature(start: Int, end: Int, run: FeatureRun): Unit = {
    run.end = end
    run.count = -1
    // The usual Feature: one list message, shorter than 128 bytes, filling it.
    val buf = cursor.buf
    if (end - start >= 2) {
      val t = buf(start)
      if ((t & 7) == WireLengthDelimited && t >= tag(KindBytes, WireLengthDelimited) &&
          t <= tag(KindInt64, WireLengthDelimited) && start + 2 + buf(start + 1) == end) {
        run.kind = t >>> 3
        run.start = start
        run.lists = 1
        run.lastListStart = start + 2
        run.lastListEnd = end
        cursor.pos = end
        return
      }
    }
    cursor.pos = start
    var kind = KindNone
    run.start = end
    run.lists = 0
    while (cursor.pos < end) {
      val tagPos = cursor.pos
      val t = cursor.readVarint(end)
      val field = t >>> 3
      if (field >= KindBytes && field <= KindInt64) {
        if ((t & 7) != WireLengthDelimited) {
          throw new WireFormatException(s"Feature field $field has wire type ${t & 7}", tagPos)
        }
        if (field != kind) { kind = field.toInt; run.start = tagPos; run.lists = 0 }
        run.lastListEnd = cursor.readLengthEnd(end)
        run.lastListStart = cursor.pos
        run.lists += 1
        cursor.pos = run.lastListEnd
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
    run.kind = kind
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
   * Reads the next step of a FeatureList at or after `from` and before `end` into `run` (as
   * [[readFeature]] does) and returns the end of its Feature message, where the search for the
   * step after it starts; -1 when there is none.
   */
  def nextStep(from: Int, end: Int, run: FeatureRun): Int = {
    cursor.pos = from
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == tag(1, WireLengthDelimited)) {
        val stepEnd = cursor.readLengthEnd(end)
        readFeature(cursor.pos, stepEnd, run)
        return stepEnd
      }
      cursor.skipField(t.toInt & 7, end)
    }
    -1
  }
}

/** Receives the values of one feature, in order. */
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
 * Counts and hands over the values of a [[FeatureRun]]: the list messages of one kind inside a
 * Feature, in packed and unpacked encodings. Counting does not decode packed values.
 */
private[sparktfrecord] final class FeatureLists(cursor: WireCursor) {
  import FeatureLists._
  import ProtoWire._

  /**
   * Counts the values of `run` (checking their encoding) and records it in the run: `run.count`,
   * and whether [[emit]] can read them from one field without a second walk through the Feature.
   */
  def count(run: FeatureRun): Int = {
    val n = if (run.kind == KindNone) {
      run.singleField = false
      0
    } else {
      // With one list message, as TensorFlow writes, the count is where the list lies.
      val single = if (run.lists == 1) countSingleList(run) else -1
      if (single >= 0) single else scan(run, null)
    }
    run.count = n
    n
  }

  /** Hands the values that [[count]] counted over to `sink`, in order. */
  def emit(run: FeatureRun, sink: ValueSink): Unit =
    if (run.singleField && run.count >= 0) emitField(run, sink)
    else if (run.count >= 0) scan(run, sink)
    else notCounted()

  private def notCounted(): Nothing =
    throw new IllegalStateException("FeatureLists.emit before count")

  /**
   * The values of a run's only list message `[lastListStart, lastListEnd)` when it holds nothing
   * or one `value` field spanning the list (a packed run, or one bytes value); else -1, for
   * [[scan]] to count them (and to report what is malformed).
   */
  private def countSingleList(run: FeatureRun): Int = {
    val start = run.lastListStart
    val end = run.lastListEnd
    run.singleField = false
    if (start == end) return 0
    val buf = cursor.buf
    if (buf(start) != ((1 << 3) | WireLengthDelimited)) return -1
    cursor.pos = start + 1
    if (cursor.readLengthEnd(end) != end) return -1
    val len = end - cursor.pos
    run.fieldStart = cursor.pos
    run.fieldEnd = end
    (run.kind: @switch) match {
      case KindFloat =>
        if ((len & 3) != 0) return -1
        run.fieldCase = FloatPacked
        run.singleField = true
        len >> 2
      case KindInt64 =>
        if (len > 0 && buf(end - 1) < 0) return -1
        run.fieldCase = Int64Packed
        run.singleField = true
        countVarints(buf, run.fieldStart, end)
      case _ =>
        run.fieldCase = BytesValue
        run.singleField = true
        1
    }
  }

  /**
   * Counts (with a null sink) or hands over the values of the run, walking every list message;
   * a count notes in the run whether it met exactly one `value` field.
   */
  private def scan(run: FeatureRun, sink: ValueSink): Int = {
    val kind = run.kind
    val end = run.end
    var n = 0
    var fields = 0
    cursor.pos = run.start
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if ((t >>> 3) == kind) {
        val listEnd = cursor.readLengthEnd(end)
        while (cursor.pos < listEnd) {
          val vt = cursor.readVarint(listEnd)
          if ((vt >>> 3) == 1) {
            n += values(run, (vt & 7).toInt, listEnd, sink)
            fields += 1
          } else {
            cursor.skipField(vt.toInt & 7, listEnd)
          }
        }
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
    if (sink == null) run.singleField = fields == 1
    n
  }

  /** The run's one `value` field, as [[count]] found it, into `sink`. */
  private def emitField(run: FeatureRun, sink: ValueSink): Unit = {
    val buf = cursor.buf
    (run.fieldCase: @switch) match {
      case Int64Packed | Int64Single =>
        cursor.pos = run.fieldStart
        while (cursor.pos < run.fieldEnd) sink.int64(cursor.readVarint(run.fieldEnd))
      case FloatPacked | FloatSingle => sink.floats(buf, run.fieldStart, run.count)
      case _ => sink.bytes(buf, run.fieldStart, run.fieldEnd - run.fieldStart)
    }
  }

  /**
   * One occurrence of the list's `value` field (a packed run or a single value) at the cursor:
   * its values into `sink`, or only counted when it is null (noting the field in `run`).
   */
  private def values(run: FeatureRun, wireType: Int, end: Int, sink: ValueSink): Int = {
    val buf = cursor.buf
    val at = cursor.pos
    val fieldCase = (run.kind << 3) | wireType
    if (sink == null) run.fieldCase = fieldCase
    (fieldCase: @switch) match {
      case Int64Packed =>
        val runEnd = cursor.readLengthEnd(end)
        if (sink == null) {
          run.fieldStart = cursor.pos
          run.fieldEnd = runEnd
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
        val v = cursor.readVarint(end)
        if (sink != null) sink.int64(v)
        else { run.fieldStart = at; run.fieldEnd = cursor.pos }
        1
      case FloatPacked =>
        val runEnd = cursor.readLengthEnd(end)
        val len = runEnd - cursor.pos
        if ((len & 3) != 0) throw new WireFormatException(s"packed float run of $len bytes", at)
        if (sink != null) sink.floats(buf, cursor.pos, len >> 2)
        else run.fieldStart = cursor.pos
        cursor.pos = runEnd
        len >> 2
      case FloatSingle =>
        if (end - cursor.pos < 4) throw new WireFormatException("float runs past its list", at)
        if (sink != null) sink.float(java.lang.Float.intBitsToFloat(readFixed32(buf, cursor.pos)))
        else run.fieldStart = cursor.pos
        cursor.pos += 4
        1
      case BytesValue =>
        val valueEnd = cursor.readLengthEnd(end)
        if (sink != null) sink.bytes(buf, cursor.pos, valueEnd - cursor.pos)
        else { run.fieldStart = cursor.pos; run.fieldEnd = valueEnd }
        cursor.pos = valueEnd
        1
      case _ =>
        throw new WireFormatException(s"${KindNames(run.kind)} value with wire type $wireType", at)
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
