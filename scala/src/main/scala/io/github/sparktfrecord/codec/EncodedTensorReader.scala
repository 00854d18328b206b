package io.github.sparktfrecord.codec

import java.util.zip.{DataFormatException, Inflater}

import scala.annotation.switch

import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeArrayWriter
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.TFRecordDataException
import io.github.sparktfrecord.wire.{FeatureRun, FeatureValueReader, ProtoWire, ValueSink}

/**
 * Reads the encoded tensor columns ([[FeaturePaths.TensorEncodingKey]], `array<…<T>>` of rank r)
 * of an `Example` row from the two features `tfds.features.Tensor(encoding=…)` stores a tensor
 * with a dynamic shape as ([[FeaturePaths.tensorNames]]): `c/value`, one bytes value (the
 * values' little-endian bytes in C order, zlib-compressed for `zlib`), and `c/shape`, r int64
 * sizes. The features may come in any order: each is kept while the record is walked
 * ([[feature]]), and the column is built when it ends ([[finish]]). The [[Inflater]] and its
 * buffer are reused.
 *
 * A column none of whose features the record has is null. A record that has one of them only,
 * a shape of another rank or with a negative size, a value that is not one bytes value, a bad
 * zlib stream, or bytes that are not the shape's number of values times the dtype's size, fails
 * naming the column, the file and the record's offset.
 */
private[sparktfrecord] final class EncodedTensorReader(
    row: RowBuilder,
    schema: StructType,
    separator: String,
    values: FeatureValueReader,
    path: String,
    sequence: Boolean) {
  import EncodedTensor._
  import ProtoWire._

  /** Per ordinal of the row: whether the column is an encoded tensor read here. */
  val isTensor: Array[Boolean] =
    schema.fields.map(f => !sequence && FeaturePaths.isEncodedTensor(f))
  private val tensors: Array[ColumnWriter] = row.columnWriters.filter(d => isTensor(d.ordinal))
  private val numTensors = tensors.length
  private val ranks: Array[Int] =
    tensors.map(d => check(schema(d.ordinal).metadata, d.dataType, d.column))
  private val elements: Array[Element] = tensors.map(d => element(schema(d.ordinal).metadata))
  private val zlib: Array[Boolean] =
    tensors.map(d => encoding(schema(d.ordinal).metadata) == "zlib")
  /** The feature names: per column, its value then its shape (k = 2c, 2c+1). */
  val names: Array[String] =
    tensors.flatMap(d => FeaturePaths.tensorNames(schema(d.ordinal).name, separator))

  /** Per feature: whether the record has it; per column, its shape and where its bytes are. */
  private val present = new Array[Boolean](2 * numTensors)
  private val shapeCounts = new Array[Int](numTensors)
  private val shapes: Array[Array[Long]] = ranks.map(r => new Array[Long](math.max(r, 1)))
  private val valueCounts = new Array[Int](numTensors)
  private val valueStarts = new Array[Int](numTensors)
  private val valueLengths = new Array[Int](numTensors)
  private var recordBuf: Array[Byte] = _
  private var anyPresent = false

  private val inflater: Inflater = if (zlib.contains(true)) new Inflater() else null
  /** The most bytes a Spark row (an UnsafeRow's buffer) can hold. */
  private final val MaxRowBytes = Int.MaxValue - 15L
  private var inflated = new Array[Byte](64)
  /** While a column is built: its bytes and the next value's position there. */
  private var data: Array[Byte] = _
  private var at = 0

  def startRecord(): Unit = if (anyPresent) {
    java.util.Arrays.fill(present, false)
    anyPresent = false
  }

  /** Feature `k` of [[names]] in the current record: kept until [[finish]]. */
  def feature(k: Int, run: FeatureRun): Unit = {
    val c = k / 2
    val n = values.count(run)
    present(k) = true
    anyPresent = true
    sink.column = c
    if (k % 2 == 0) {
      if (n > 0 && run.kind != KindBytes) {
        fail(c,
          s"cannot be read from its ${KindNames(run.kind)} feature '${names(k)}': it " +
            "holds one bytes value")
      }
      valueCounts(c) = n
      if (n == 1) values.emit(run, sink)
    } else {
      if (n > 0 && run.kind != KindInt64) {
        fail(c,
          s"cannot be read from its ${KindNames(run.kind)} feature '${names(k)}': a " +
            "shape is int64")
      }
      if (n != ranks(c)) {
        fail(c, s"has a shape of $n sizes in '${names(k)}', but its rank is ${ranks(c)}")
      }
      sink.count = 0
      if (n > 0) values.emit(run, sink)
      shapeCounts(c) = n
    }
  }

  /** Writes each column the record has features of into the row, checking them first. */
  def finish(): Unit = if (anyPresent) {
    var c = 0
    while (c < numTensors) {
      if (present(2 * c) || present(2 * c + 1)) write(c)
      c += 1
    }
  }

  private def write(c: Int): Unit = {
    val d = tensors(c)
    var k = 2 * c
    while (k < 2 * c + 2) {
      if (!present(k)) {
        fail(c,
          s"is read from the features '${names(2 * c)}' and '${names(2 * c + 1)}', " +
            s"but the record has no '${names(k)}'")
      }
      k += 1
    }
    if (valueCounts(c) != 1) {
      fail(c, s"has ${valueCounts(c)} values in '${names(2 * c)}', which holds one bytes value")
    }
    val shape = shapes(c)
    val rank = ranks(c)
    var count = 1L
    var level = 0
    while (level < rank) {
      if (shape(level) < 0 || shape(level) > Int.MaxValue) {
        fail(c, s"has the size ${shape(level)} in '${names(2 * c + 1)}'")
      }
      count = if (count == 0 || shape(level) == 0) 0L
      else if (count > Int.MaxValue / shape(level)) Int.MaxValue.toLong + 1
      else count * shape(level)
      level += 1
    }
    // The lists above the values take 8 bytes of the row each (their offset and size), however
    // few values they hold: a shape like (2^31 - 1, 0) holds no value but would fill a row past
    // what Spark's rows can hold (and the heap on the way), so it fails here, before.
    var lists = 0L
    var above = 1L
    level = 0
    while (level < rank - 1 && lists <= MaxRowBytes / 8) {
      above = Math.min(above * shape(level), MaxRowBytes)
      lists += above
      level += 1
    }
    if (lists > MaxRowBytes / 8) {
      fail(c,
        s"has the shape ${shape.take(rank).mkString("(", ", ", ")")} in '${names(2 * c + 1)}', " +
          s"whose lists do not fit in a Spark row (at most $MaxRowBytes bytes)")
    }
    val expected = count * elements(c).itemSize
    if (zlib(c)) inflate(c, expected)
    else {
      data = recordBuf
      at = valueStarts(c)
      if (valueLengths(c) != expected) sizeMismatch(c, valueLengths(c).toString, expected)
    }
    row.set(d.ordinal)
    val rowWriter = row.writer
    val previousCursor = rowWriter.cursor()
    writeLevel(c, d, 0)
    rowWriter.setOffsetAndSizeFromPreviousCursor(d.ordinal, previousCursor)
  }

  /** Inflates column c's value into [[inflated]], which must hold exactly `expected` bytes. */
  private def inflate(c: Int, expected: Long): Unit = {
    if (expected > Int.MaxValue - 1) sizeMismatch(c, "more", expected)
    if (inflated.length < expected + 1) inflated = new Array[Byte]((expected + 1).toInt)
    inflater.reset()
    inflater.setInput(recordBuf, valueStarts(c), valueLengths(c))
    val n = try inflater.inflate(inflated, 0, expected.toInt + 1)
    catch {
      case e: DataFormatException =>
        fail(c, s"has a bad zlib stream in '${names(2 * c)}': ${e.getMessage}")
    }
    if (n > expected) sizeMismatch(c, "more", expected)
    if (!inflater.finished()) {
      fail(c, s"has a truncated zlib stream in '${names(2 * c)}' ($n bytes inflated)")
    }
    if (n != expected) sizeMismatch(c, n.toString, expected)
    data = inflated
    at = 0
  }

  private def sizeMismatch(c: Int, found: String, expected: Long): Nothing =
    fail(c,
      s"has $found bytes of values in '${names(2 * c)}', but its shape " +
        s"${shapes(c).take(ranks(c)).mkString("(", ", ", ")")} of ${elements(c).itemSize}-byte " +
        s"values takes $expected")

  /** The arrays at `level` (0: the outermost), recursively; the values at the last. */
  private def writeLevel(c: Int, d: ColumnWriter, level: Int): Unit = {
    val n = shapes(c)(level).toInt
    val rowWriter = row.writer
    if (level == ranks(c) - 1) fill(c, d.arrayWriter, n)
    else {
      val writer = d.levelWriters(level)
      writer.initialize(n)
      var i = 0
      while (i < n) {
        val cursor = rowWriter.cursor()
        writeLevel(c, d, level + 1)
        writer.setOffsetAndSizeFromPreviousCursor(i, cursor)
        i += 1
      }
    }
  }

  /** The next `n` values into a new innermost array. */
  private def fill(
      c: Int,
      w: UnsafeArrayWriter,
      n: Int): Unit = {
    w.initialize(n)
    val code = elements(c).code
    var i = 0
    while (i < n) {
      (code: @switch) match {
        case Float32 => w.write(i, java.lang.Float.intBitsToFloat(le(4).toInt))
        case Float64 => w.write(i, java.lang.Double.longBitsToDouble(le(8)))
        case Int8 => w.write(i, le(1).toByte)
        case Int16 => w.write(i, le(2).toShort)
        case Int32 => w.write(i, le(4).toInt)
        case Int64 => w.write(i, le(8))
        case UInt8 => w.write(i, (le(1) & 0xff).toShort)
        case _ => w.write(i, le(1) != 0)
      }
      i += 1
    }
  }

  /** The next `size` bytes of [[data]] as a little-endian integer. */
  private def le(size: Int): Long = {
    var v = 0L
    var k = 0
    while (k < size) {
      v |= (data(at + k) & 0xffL) << (8 * k)
      k += 1
    }
    at += size
    v
  }

  /** Where [[feature]] puts the values it reads, for column `column`. */
  private object sink extends ValueSink {
    var column = 0
    var count = 0
    def int64(x: Long): Unit = {
      shapes(column)(count) = x
      count += 1
    }
    def float(x: Float): Unit = ()
    def bytes(buf: Array[Byte], off: Int, len: Int): Unit = {
      recordBuf = buf
      valueStarts(column) = off
      valueLengths(column) = len
    }
  }

  private def fail(c: Int, what: String): Nothing = {
    val d = tensors(c)
    throw TFRecordDataException.mismatch(d.column,
      s"Column '${d.column}' (${d.dataType.simpleString}) $what", path, row.offset)
  }
}
