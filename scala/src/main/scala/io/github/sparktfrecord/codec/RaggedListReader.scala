package io.github.sparktfrecord.codec

import io.github.sparktfrecord.{TFRecordDataException, ValueOutOfRangeException}
import io.github.sparktfrecord.wire.{FeatureRun, FeatureValueReader, ProtoWire, ValueSink}
import io.github.sparktfrecord.wire.FeatureValueReader.bufferLength

/**
 * Reads the lists-of-lists columns (`array<array<…<T>>>`, depth d) of an `Example` row from the
 * ragged layout TensorFlow Datasets writes ([[FeaturePaths.raggedNames]]):
 * `c/ragged_row_lengths_0` … `_{d-2}` (int64) and `c/ragged_flat_values`. The features may come
 * in any order, so each one's values are kept while the record is walked ([[feature]]: lengths
 * as longs, values as longs, floats or the place of their bytes in the record) and the column is
 * built from them when it ends ([[finish]]), level by level, into the column's writers.
 *
 * Every such column of `row` (named by `fieldNames`, joined to the suffixes with `separator`,
 * the option `pathSeparator`) has d feature names in [[names]], which the deserializer looks up
 * after the columns' own (and the sparse vectors'). A column none of whose features the record
 * has is null. A record that misses some of them, whose row lengths are negative or do not add
 * up to the number of entries of the next level (the last: of flat values), or whose features
 * are of a kind the column cannot read, fails naming the column, the file and the record's
 * offset.
 */
private[sparktfrecord] final class RaggedListReader(
    row: RowBuilder,
    fieldNames: Array[String],
    separator: String,
    values: FeatureValueReader,
    path: String,
    sequence: Boolean,
    encodedTensors: Array[Boolean]) {
  import ProtoWire._

  /**
   * In a SequenceExample lists of lists are feature lists: none is read from here; nor are
   * encoded tensors (`encodedTensors`, by ordinal: [[EncodedTensorReader]]).
   */
  private val lists: Array[ColumnWriter] =
    if (sequence) Array.empty
    else {
      row.columnWriters.filter(d =>
        d.shape == ColumnWriter.ShapeNested &&
          !encodedTensors(d.ordinal))
    }
  private val numLists = lists.length
  /** The feature names: d per column, [[FeaturePaths.raggedNames]]'s order (level by level). */
  val names: Array[String] =
    lists.flatMap(d => FeaturePaths.raggedNames(fieldNames(d.ordinal), separator, d.depth))
  /** Per column, its first feature in [[names]]; per feature, its column and level. */
  private val firsts: Array[Int] = lists.map(_.depth).scanLeft(0)(_ + _).init
  private val columnOf: Array[Int] = lists.indices.flatMap(c => Seq.fill(lists(c).depth)(c))
    .toArray
  private val levelOf: Array[Int] = lists.flatMap(d => 0 until d.depth)

  /** The ragged features of the column at `ordinal`, quoted, for messages. */
  def featuresOf(ordinal: Int): String = {
    val c = lists.indexWhere(_.ordinal == ordinal)
    names.slice(firsts(c), firsts(c) + lists(c).depth).map(n => s"'$n'").mkString(", ")
  }

  /** Per feature: whether the record has it, and its number of values. */
  private val present = new Array[Boolean](names.length)
  private val counts = new Array[Int](names.length)
  /** Per feature: its int64 values (row lengths, or int64 flat values). */
  private val longs: Array[Array[Long]] = names.map(_ => new Array[Long](16))
  /** Per column: the kind of its flat values; float values, or bytes' offsets and lengths. */
  private val flatKinds = new Array[Int](numLists)
  private val floatValues: Array[Array[Float]] = lists.map(_ => new Array[Float](16))
  private val byteStarts: Array[Array[Int]] = lists.map(_ => new Array[Int](16))
  private val byteLengths: Array[Array[Int]] = lists.map(_ => new Array[Int](16))
  /** The record's buffer, which the bytes values' offsets are in. */
  private var recordBuf: Array[Byte] = _
  /** Per column: whether the record has some feature of it. */
  private val touched = new Array[Boolean](numLists)
  private var anyTouched = false
  /** While a column is written: the next entry of each level's lengths, and the next value. */
  private val positions = new Array[Int](lists.map(_.depth).foldLeft(1)(math.max))
  private var nextValue = 0

  def startRecord(): Unit = if (anyTouched) {
    java.util.Arrays.fill(present, false)
    java.util.Arrays.fill(touched, false)
    anyTouched = false
  }

  /** Feature `k` of [[names]] in the current record: its values are kept until [[finish]]. */
  def feature(k: Int, run: FeatureRun): Unit = {
    val c = columnOf(k)
    val d = lists(c)
    val flat = levelOf(k) == d.depth - 1
    val n = values.count(run)
    if (n > 0) {
      if (!flat && run.kind != KindInt64) {
        fail(d,
          s"cannot be read from its ${KindNames(run.kind)} feature '${names(k)}': row " +
            "lengths are int64")
      }
      if (flat && !d.accepts(run.kind)) {
        fail(d, s"cannot be read from its ${KindNames(run.kind)} feature '${names(k)}'")
      }
    }
    present(k) = true
    counts(k) = n
    touched(c) = true
    anyTouched = true
    if (n > 0) {
      sink.column = c
      sink.feature = k
      sink.count = 0
      run.kind match {
        case KindInt64 => if (longs(k).length < n) longs(k) = new Array[Long](bufferLength(n))
        case KindFloat =>
          if (floatValues(c).length < n) floatValues(c) = new Array[Float](bufferLength(n))
        case _ =>
          if (byteStarts(c).length < n) {
            byteStarts(c) = new Array[Int](bufferLength(n))
            byteLengths(c) = new Array[Int](bufferLength(n))
          }
      }
      if (flat) flatKinds(c) = run.kind
      values.emit(run, sink)
    }
  }

  /** Writes each column the record has features of into the row, checking them first. */
  def finish(): Unit = if (anyTouched) {
    var c = 0
    while (c < numLists) {
      if (touched(c)) write(c)
      c += 1
    }
  }

  private def write(c: Int): Unit = {
    val d = lists(c)
    val first = firsts(c)
    val depth = d.depth
    var level = 0
    while (level < depth) {
      if (!present(first + level)) {
        fail(d,
          s"is read from the ragged features ${featuresOf(d.ordinal)}, but the record has no " +
            s"'${names(first + level)}'")
      }
      level += 1
    }
    level = 0
    while (level < depth - 1) {
      val k = first + level
      val lengths = longs(k)
      var sum = 0L
      var i = 0
      while (i < counts(k)) {
        if (lengths(i) < 0) {
          fail(d, s"has the negative row length ${lengths(i)} in '${names(k)}'")
        }
        sum += lengths(i)
        i += 1
      }
      if (sum != counts(k + 1)) {
        val what = if (level == depth - 2) "values" else "row lengths"
        fail(d,
          s"has row lengths in '${names(k)}' that add up to $sum, but '${names(k + 1)}' " +
            s"holds ${counts(k + 1)} $what")
      }
      level += 1
    }
    row.set(d.ordinal)
    val rowWriter = row.writer
    val previousCursor = rowWriter.cursor()
    java.util.Arrays.fill(positions, 0)
    nextValue = 0
    try {
      writeLevel(c, d, first, 0, counts(first))
    } catch {
      case e: ValueOutOfRangeException => fail(d, e.getMessage)
    }
    rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
  }

  /** `n` lists at depth level+1 into a new array of `level`'s writer, recursively. */
  private def writeLevel(c: Int, d: ColumnWriter, first: Int, level: Int, n: Int): Unit = {
    val writer = d.levelWriters(level)
    val rowWriter = row.writer
    val lengths = longs(first + level)
    val innermost = level == d.depth - 2
    writer.initialize(n)
    var i = 0
    while (i < n) {
      val length = lengths(positions(level)).toInt
      positions(level) += 1
      val cursor = rowWriter.cursor()
      if (innermost) fill(c, d, length) else writeLevel(c, d, first, level + 1, length)
      writer.setOffsetAndSizeFromPreviousCursor(i, cursor)
      i += 1
    }
  }

  /** The next `n` flat values into a new innermost array. */
  private def fill(c: Int, d: ColumnWriter, n: Int): Unit = {
    d.beginArray(n)
    val from = nextValue
    val until = from + n
    var j = from
    flatKinds(c) match {
      case KindInt64 =>
        val v = longs(firsts(c) + d.depth - 1)
        while (j < until) {
          d.int64(v(j))
          j += 1
        }
      case KindFloat =>
        val v = floatValues(c)
        while (j < until) {
          d.float(v(j))
          j += 1
        }
      case _ =>
        val starts = byteStarts(c)
        val lengths = byteLengths(c)
        while (j < until) {
          d.bytes(recordBuf, starts(j), lengths(j))
          j += 1
        }
    }
    d.end()
    nextValue = until
  }

  /** Where [[feature]] puts the values it reads: the feature `feature` of column `column`. */
  private object sink extends ValueSink {
    var column = 0
    var feature = 0
    var count = 0
    def int64(x: Long): Unit = {
      longs(feature)(count) = x
      count += 1
    }
    def float(x: Float): Unit = {
      floatValues(column)(count) = x
      count += 1
    }
    def bytes(buf: Array[Byte], off: Int, len: Int): Unit = {
      recordBuf = buf
      byteStarts(column)(count) = off
      byteLengths(column)(count) = len
      count += 1
    }
  }

  private def fail(d: ColumnWriter, what: String): Nothing =
    throw TFRecordDataException.mismatch(d.column,
      s"Column '${d.column}' (${d.dataType.simpleString}) $what", path, row.offset)
}
