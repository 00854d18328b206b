package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeArrayWriter

import io.github.sparktfrecord.TFRecordDataException
import io.github.sparktfrecord.wire.{FeatureRun, FeatureValueReader, ProtoWire, ValueSink}
import io.github.sparktfrecord.wire.FeatureValueReader.bufferLength

/**
 * Reads the vector columns of a row from the sparse layout (the option `vectorLayout` `sparse`,
 * `tf.io.SparseFeature`'s): `c/indices` (int64, increasing positions), `c/values` (float) and
 * `c/size` (int64, one value), [[FeaturePaths.VectorParts]]. The three features may come in any
 * order, so each is kept while the record is walked ([[feature]]) and the vector is built from
 * them when it ends ([[finish]]), as a `SparseVector` (VectorUDT's storage with type 0).
 *
 * Every vector column of `row` (named by `fieldNames`, joined to the parts' names with
 * `separator`, the option `pathSeparator`) has the three feature names [[names]], which the
 * deserializer looks up after the columns' own: feature `k` of them is part `k % 3` of vector
 * `k / 3`. A
 * record that has its dense feature `c` as well, misses one of the three, or whose three do not
 * make a vector, fails naming the column, the file and the record's offset.
 */
private[sparktfrecord] final class SparseVectorReader(
    row: RowBuilder,
    fieldNames: Array[String],
    separator: String,
    values: FeatureValueReader,
    path: String) {
  import FeaturePaths._

  private val vectors: Array[ColumnWriter] =
    row.columnWriters.filter(_.shape == ColumnWriter.ShapeVector)
  private val numVectors = vectors.length
  /** Per vector, a bit per part (1 << part) that the current record holds. */
  private val parts = new Array[Int](numVectors)
  private val indices = Array.fill(numVectors)(new Array[Long](16))
  private val valueBuffers = Array.fill(numVectors)(new Array[Float](16))
  private val indexCounts = new Array[Int](numVectors)
  private val valueCounts = new Array[Int](numVectors)
  private val sizes = new Array[Long](numVectors)
  private val sizeCounts = new Array[Int](numVectors)
  private val indexWriters: Array[UnsafeArrayWriter] =
    vectors.map(v => new UnsafeArrayWriter(v.structWriter, 4))
  private var touched = false

  /** The feature names after the columns' own: three per vector column. */
  val names: Array[String] =
    vectors.flatMap(v => sparseVectorNames(fieldNames(v.ordinal), separator))

  def startRecord(): Unit = if (touched) {
    java.util.Arrays.fill(parts, 0)
    touched = false
  }

  /** Feature `k` of [[names]] in the current record: its values are kept until [[finish]]. */
  def feature(k: Int, run: FeatureRun): Unit = {
    val v = k / 3
    val part = VectorIndices + k % 3 // the order of VectorParts
    val d = vectors(v)
    val n = values.count(run)
    val kind = if (part == VectorValues) ProtoWire.KindFloat else ProtoWire.KindInt64
    if (n > 0 && run.kind != kind) {
      fail(d,
        s"cannot be read from its ${ProtoWire.KindNames(run.kind)} feature " +
          s"'${featureName(d, part)}': it must be ${ProtoWire.KindNames(kind)}")
    }
    touched = true
    parts(v) |= 1 << part
    sink.vector = v
    sink.part = part
    sink.count = 0
    part match {
      case VectorIndices =>
        if (indices(v).length < n) indices(v) = new Array[Long](bufferLength(n))
      case VectorValues =>
        if (valueBuffers(v).length < n) valueBuffers(v) = new Array[Float](bufferLength(n))
      case _ =>
    }
    if (n > 0) values.emit(run, sink)
    part match {
      case VectorIndices => indexCounts(v) = n
      case VectorValues => valueCounts(v) = n
      case _ => sizeCounts(v) = n
    }
  }

  /** Writes each vector the record has parts of into the row, checking them first. */
  def finish(): Unit = if (touched) {
    var v = 0
    while (v < numVectors) {
      if (parts(v) != 0) write(v)
      v += 1
    }
  }

  private def write(v: Int): Unit = {
    val d = vectors(v)
    if (row.isSet(d.ordinal)) {
      fail(d,
        s"has both the dense feature '${fieldNames(d.ordinal)}' and the sparse features " +
          s"'${featureName(d, VectorIndices)}', '${featureName(d, VectorValues)}'")
    }
    var part = VectorIndices
    while (part <= VectorSize) {
      if ((parts(v) & (1 << part)) == 0) {
        val what = if (part == VectorSize) "its size, " else ""
        fail(d,
          s"is read from the sparse features '${featureName(d, VectorIndices)}', " +
            s"'${featureName(d, VectorValues)}' and '${featureName(d, VectorSize)}', but the " +
            s"record has no '${featureName(d, part)}' (${what}written with vectorLayout sparse)")
      }
      part += 1
    }
    if (sizeCounts(v) != 1) {
      fail(d,
        s"needs one value in '${featureName(d, VectorSize)}', the vector's size, but it " +
          s"holds ${sizeCounts(v)}")
    }
    val size = sizes(v)
    if (size < 0 || size > Int.MaxValue) {
      fail(d,
        s"has the size $size in '${featureName(d, VectorSize)}': a vector's size is " +
          s"from 0 to ${Int.MaxValue}")
    }
    val n = indexCounts(v)
    if (n != valueCounts(v)) {
      fail(d,
        s"has $n indices in '${featureName(d, VectorIndices)}' but ${valueCounts(v)} " +
          s"values in '${featureName(d, VectorValues)}': they must be as many")
    }
    val index = indices(v)
    var previous = 0L
    var i = 0
    while (i < n) {
      val at = index(i)
      if (i > 0 && at <= previous) {
        fail(d,
          s"has the index $at after $previous in '${featureName(d, VectorIndices)}': " +
            "indices must be increasing")
      }
      if (at < 0 || at >= size) {
        fail(d,
          s"has the index $at in '${featureName(d, VectorIndices)}', outside the " +
            s"vector's size $size")
      }
      previous = at
      i += 1
    }
    row.set(d.ordinal)
    // VectorUDT's storage: struct<type: tinyint (0: sparse), size: int, indices: array<int>,
    // values: array<double>>.
    val rowWriter = row.writer
    val previousCursor = rowWriter.cursor()
    val struct = d.structWriter
    struct.resetRowWriter()
    struct.write(0, 0.toByte)
    struct.write(1, size.toInt)
    val indexCursor = struct.cursor()
    val iw = indexWriters(v)
    iw.initialize(n)
    i = 0
    while (i < n) {
      iw.write(i, index(i).toInt)
      i += 1
    }
    struct.setOffsetAndSizeFromPreviousCursor(2, indexCursor)
    val valuesCursor = struct.cursor()
    val vw = d.arrayWriter
    val value = valueBuffers(v)
    vw.initialize(n)
    i = 0
    while (i < n) {
      vw.write(i, value(i).toDouble)
      i += 1
    }
    struct.setOffsetAndSizeFromPreviousCursor(3, valuesCursor)
    rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
  }

  /** Where [[feature]] puts the values it reads: the part of one vector. */
  private object sink extends ValueSink {
    var vector = 0
    var part = 0
    var count = 0
    def int64(x: Long): Unit = {
      if (part == VectorIndices) indices(vector)(count) = x else sizes(vector) = x
      count += 1
    }
    def float(x: Float): Unit = {
      valueBuffers(vector)(count) = x
      count += 1
    }
    def bytes(buf: Array[Byte], off: Int, len: Int): Unit =
      throw new IllegalStateException("bytes value for a vector")
  }

  private def featureName(d: ColumnWriter, part: Int): String =
    fieldNames(d.ordinal) + separator + VectorParts.find(_._1 == part).get._2

  private def fail(d: ColumnWriter, what: String): Nothing =
    throw TFRecordDataException.mismatch(d.column,
      s"Column '${d.column}' " +
        s"(${d.dataType.simpleString}) $what", path, row.offset)
}
