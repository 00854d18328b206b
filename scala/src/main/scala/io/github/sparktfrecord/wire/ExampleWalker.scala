package io.github.sparktfrecord.wire

import io.github.sparktfrecord.WireFormatException

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
  import ExampleWalker._
  import ProtoWire._

  private val run = new FeatureRun

  /** Visits every feature of the Example in `buf[start, end)`. */
  def walkExample(buf: Array[Byte], start: Int, end: Int, visitor: FeatureVisitor): Unit = {
    cursor.buf = buf
    cursor.pos = start
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == FeaturesTag) {
        val mapEnd = cursor.readLengthEnd(end)
        walkMap(mapEnd, visitor, lists = false)
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
  }

  /** Visits the context features and feature lists of the SequenceExample in `buf[start, end)`. */
  def walkSequenceExample(buf: Array[Byte], start: Int, end: Int, visitor: FeatureVisitor): Unit = {
    cursor.buf = buf
    cursor.pos = start
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == FeaturesTag || t == FeatureListsTag) {
        val mapEnd = cursor.readLengthEnd(end)
        walkMap(mapEnd, visitor, lists = t == FeatureListsTag)
      } else {
        cursor.skipField(t.toInt & 7, end)
      }
    }
  }

  /** Features or FeatureLists, from the cursor to `end`: map entries { key = 1, value = 2 }. */
  private def walkMap(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
    val buf = cursor.buf
    var pos = cursor.pos
    while (pos < end) {
      val entry = usualEntry(buf, pos, end)
      if (entry >= 0) {
        val keyStart = (entry >>> 32).toInt
        val keyEnd = keyStart + buf(keyStart - 1)
        val entryEnd = entry.toInt
        dispatch(visitor, lists, keyStart, keyEnd, entryValue(buf, keyEnd, entryEnd), entryEnd)
        pos = entryEnd
      } else {
        // Another layout, or another field.
        cursor.pos = pos
        val t = cursor.readVarint(end)
        if (t == EntryTag) {
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

  /** A map entry [[usualEntry]] did not recognise, up to `end`: laid out in any way. */
  private def walkEntry(end: Int, visitor: FeatureVisitor, lists: Boolean): Unit = {
    // Key and value may come in either order, or be missing (then "" and an empty message).
    var keyStart = cursor.pos
    var keyEnd = cursor.pos
    var valueStart = end
    var valueEnd = end
    while (cursor.pos < end) {
      val t = cursor.readVarint(end)
      if (t == KeyTag) {
        keyEnd = cursor.readLengthEnd(end)
        keyStart = cursor.pos
        cursor.pos = keyEnd
      } else if (t == EntryValueTag) {
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
    // The usual Feature: one list message filling it.
    val buf = cursor.buf
    if (end - start >= 2) {
      val t = buf(start)
      if (t == BytesListTag || t == FloatListTag || t == Int64ListTag) {
        val list = ExampleWalker.usualList(buf, start, end, t)
        if (list >= 0) {
          run.kind = t >>> 3
          run.start = start
          run.lists = 1
          run.lastListStart = (list >>> 32).toInt
          run.lastListEnd = end
          cursor.pos = end
          return
        }
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
      if (t == StepTag) n += 1
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
      if (t == StepTag) {
        val stepEnd = cursor.readLengthEnd(end)
        readFeature(cursor.pos, stepEnd, run)
        return stepEnd
      }
      cursor.skipField(t.toInt & 7, end)
    }
    -1
  }
}

/**
 * The one-byte tags of the fields an Example is made of, and the recognisers of the usual layout
 * (as TensorFlow and every writer lay a record out) that the fast path ([[UsualLayoutReader]]) and
 * [[FeatureValueReader]] share. A recogniser never throws: it answers `(start << 32) | end` of
 * what it found, or -1 for anything else, which the caller then leaves to the general walk.
 */
private[sparktfrecord] object ExampleWalker {
  import ProtoWire._

  /** `Example.features` (and `SequenceExample.context`). */
  final val FeaturesTag = (1 << 3) | WireLengthDelimited
  /** `SequenceExample.feature_lists`. */
  final val FeatureListsTag = (2 << 3) | WireLengthDelimited
  /** One entry of the `Features.feature` map, and its `key` and `value` fields. */
  final val EntryTag = (1 << 3) | WireLengthDelimited
  final val KeyTag = (1 << 3) | WireLengthDelimited
  final val EntryValueTag = (2 << 3) | WireLengthDelimited
  /** The list messages of a Feature, by kind. */
  final val BytesListTag = (KindBytes << 3) | WireLengthDelimited
  final val FloatListTag = (KindFloat << 3) | WireLengthDelimited
  final val Int64ListTag = (KindInt64 << 3) | WireLengthDelimited
  /** A step of a `FeatureList`: one Feature. */
  final val StepTag = (1 << 3) | WireLengthDelimited
  /** A list's `value` field: a packed run of numbers, or one bytes value. */
  final val ListValueTag = (1 << 3) | WireLengthDelimited

  /** The shortest map entry: `0A 04 0A 00 12 00`, an empty key and an empty Feature. */
  private final val MinEntryBytes = 6

  /**
   * The map entry at `at`, ending at most at `limit`, when it is laid out as every writer lays it
   * out: `0A len 0A keyLen key 12 len Feature`, the key (shorter than 128 bytes) and the value
   * each once, filling the entry: `(keyStart << 32) | entryEnd`, else -1. The key's length is the
   * byte before it; [[entryValue]] finds where the value starts. Recognised from a few bytes, so
   * that skipping an unwanted feature costs little more.
   */
  def usualEntry(buf: Array[Byte], at: Int, limit: Int): Long = {
    if (limit - at < MinEntryBytes || buf(at) != EntryTag) return -1L
    var entryStart = at + 2
    var entryEnd = entryStart + buf(at + 1)
    if (entryEnd < entryStart) { // a length of more than one byte
      val entry = delimited(buf, at + 1, limit)
      if (entry < 0) return -1L
      entryStart = (entry >>> 32).toInt
      entryEnd = entry.toInt
    }
    if (entryEnd > limit || entryEnd - entryStart < 4 || buf(entryStart) != KeyTag) return -1L
    val keyLength = buf(entryStart + 1)
    val keyEnd = entryStart + 2 + keyLength
    if (keyLength < 0 || entryEnd - keyEnd < 2 || buf(keyEnd) != EntryValueTag) return -1L
    if (keyEnd + 2 + buf(keyEnd + 1) != entryEnd &&
        delimited(buf, keyEnd + 1, entryEnd).toInt != entryEnd) {
      return -1L
    }
    ((entryStart + 2).toLong << 32) | entryEnd
  }

  /** Where the value of an entry [[usualEntry]] recognised starts: its key ends at `keyEnd`. */
  def entryValue(buf: Array[Byte], keyEnd: Int, entryEnd: Int): Int =
    if (keyEnd + 2 + buf(keyEnd + 1) == entryEnd) keyEnd + 2
    else (delimited(buf, keyEnd + 1, entryEnd) >>> 32).toInt

  /**
   * The length-delimited field at `at` whose one-byte tag is `fieldTag`, ending at most at
   * `limit`: `(start << 32) | end` of its bytes, else -1.
   */
  def usualField(buf: Array[Byte], at: Int, limit: Int, fieldTag: Int): Long =
    if (at < limit && buf(at) == fieldTag) delimited(buf, at + 1, limit) else -1L

  /** The Feature `buf[start, end)` is one list message whose tag is `listTag`, filling it. */
  def usualList(buf: Array[Byte], start: Int, end: Int, listTag: Int): Long = {
    val l = usualField(buf, start, end, listTag)
    if (l.toInt == end) l else -1L
  }

  /** The list message `buf[start, end)` is one `value` field, filling it. */
  def usualValue(buf: Array[Byte], start: Int, end: Int): Long = {
    val v = usualField(buf, start, end, ListValueTag)
    if (v.toInt == end) v else -1L
  }
}
