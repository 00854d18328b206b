package io.github.sparktfrecord.wire

import scala.annotation.switch

import io.github.sparktfrecord.WireFormatException

/**
 * Reads the values of a [[FeatureRun]] (the list messages of one kind inside a Feature, in packed
 * and unpacked encodings) in two steps: [[count]] counts them, without decoding packed values, and
 * [[emit]] then hands them over to a [[ValueSink]].
 */
private[sparktfrecord] final class FeatureValueReader(
    val cursor: WireCursor) extends PackedVarints {
  import FeatureValueReader._
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
    throw new IllegalStateException("FeatureValueReader.emit before count")

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
    val value = ExampleWalker.usualValue(buf, start, end)
    if (value < 0) return -1
    run.fieldStart = (value >>> 32).toInt
    run.fieldEnd = end
    val len = end - run.fieldStart
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
      case Int64Packed | Int64Single => int64s(buf, run.fieldStart, run.fieldEnd, sink)
      case FloatPacked | FloatSingle => sink.floats(buf, run.fieldStart, run.count)
      case _ => sink.bytes(buf, run.fieldStart, run.fieldEnd - run.fieldStart)
    }
  }

  /**
   * The varints of a packed run `buf[from, until)` that [[count]] found ends on a varint's last
   * byte, into `sink`: how many.
   */
  private def int64s(buf: Array[Byte], from: Int, until: Int, sink: ValueSink): Int = {
    var p = from
    var n = 0
    while (p < until) {
      val v = varint(buf, p)
      if (varintEnd < 0) tooLong(p)
      sink.int64(v)
      p = varintEnd
      n += 1
    }
    n
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
          val n = int64s(buf, cursor.pos, runEnd, sink)
          cursor.pos = runEnd
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

private[sparktfrecord] object FeatureValueReader {
  // (kind << 3) | wire type of a list's value field, as constants so the match is a tableswitch.
  final val Int64Packed = 26 // KindInt64, length-delimited
  final val Int64Single = 24 // KindInt64, varint
  final val FloatPacked = 18 // KindFloat, length-delimited
  final val FloatSingle = 21 // KindFloat, fixed32
  final val BytesValue = 10 // KindBytes, length-delimited

  /**
   * The length of a new buffer for a feature's `n` values ([[FeatureValueReader#count]]), kept
   * by a reader from record to record: the power of two at or above `n` (16 at least), so that
   * lists that grow record by record make it reallocate a few times, not at every record.
   */
  def bufferLength(n: Int): Int =
    if (n > (1 << 30)) n else Math.max(16, Integer.highestOneBit(n - 1) << 1)
}
