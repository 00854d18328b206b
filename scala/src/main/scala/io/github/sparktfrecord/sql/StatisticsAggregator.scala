package io.github.sparktfrecord.sql

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.concurrent.Await
import scala.concurrent.duration.Duration

import io.github.sparktfrecord.codec.UnsafeSlot

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

/**
 * One partition's figures of TFDV's statistics, for every column at once: how many rows, and per
 * column how many rows hold how many values, and its numbers ([[NumberSummary]]) or its byte
 * strings ([[StringCounts]]). The columns are numbers, binary or strings, or arrays of them: the
 * features as the records hold them, which the Python side selects (`spark_tfrecord.statistics`);
 * a double column marked 'f' in `rounded` is rounded to float32 first, as the jar writes it.
 */
private[sparktfrecord] final class StatisticsAggregator(schema: StructType, rounded: String) {
  import StatisticsAggregator._

  private val kinds = kindsOf(schema)
  private val elements = elementsOf(schema, rounded)
  private val chunk = NumberSummary.chunkSize(kinds.count(k => k == Number || k == Numbers))
  private val work = new NumberSummary.Work(chunk)
  private val numbers =
    kinds.map(k => if (k == Number || k == Numbers) new NumberSummary(chunk, work) else null)
  private val strings = kinds.map(k => if (k == Bytes || k == ByteLists) new StringCounts else null)
  private val sizes = kinds.map(_ => new Array[Long](2))
  private val array = new UnsafeArrayData // reused to read an UnsafeRow's arrays in place
  private var rows = 0L

  def add(row: InternalRow): Unit = {
    rows += 1
    var j = 0
    while (j < kinds.length) {
      if (!row.isNullAt(j)) kinds(j) match {
        case Number =>
          sizes(j)(1) += 1
          numbers(j).add(number(row, j, elements(j)))
        case Bytes =>
          sizes(j)(1) += 1
          addBytes(strings(j), row, j)
        case kind =>
          val values = arrayAt(row, j)
          val n = values.numElements()
          if (n >= sizes(j).length) sizes(j) = java.util.Arrays.copyOf(sizes(j), n * 2)
          sizes(j)(n) += 1
          if (kind == Numbers && (values eq array)) addNumbers(numbers(j), array, elements(j))
          else {
            var i = 0
            while (i < n) {
              if (!values.isNullAt(i)) {
                if (kind == Numbers) numbers(j).add(number(values, i, elements(j)))
                else addBytes(strings(j), values, i)
              }
              i += 1
            }
          }
      }
      j += 1
    }
  }

  @inline private def number(from: SpecializedGetters, i: Int, element: Int): Double =
    element match {
      case Doubles => from.getDouble(i)
      case Floats => from.getFloat(i).toDouble
      case Longs => from.getLong(i).toDouble
      case Ints => from.getInt(i).toDouble
      case Shorts => from.getShort(i).toDouble
      case Bytes8 => from.getByte(i).toDouble
      case _ => from.getDouble(i).toFloat.toDouble // FloatRounded
    }

  /**
   * An unsafe array's numbers read in place. With no null among them (most lists), copied into
   * the summary's buffer a run at a time, the element's type matched once per run.
   */
  private def addNumbers(summary: NumberSummary, values: UnsafeArrayData, element: Int): Unit = {
    val n = values.numElements()
    val base = values.getBaseObject
    val at = values.getBaseOffset + UnsafeArrayData.calculateHeaderPortionInBytes(n)
    if (anyNull(values, n)) {
      var i = 0
      while (i < n) {
        if (!values.isNullAt(i)) summary.add(number(values, i, element))
        i += 1
      }
    } else {
      var i = 0
      while (i < n) {
        val to = summary.buffer // (two vals, not a pair: nothing made per row)
        val from = summary.filledUpTo
        val run = math.min(n - i, to.length - from)
        copy(base, at, i, to, from, run, element)
        summary.took(run)
        i += run
      }
    }
  }

  // `run` numbers of an unsafe array's data at `at`, from its `i`-th, to `to` from `from`.
  private def copy(base: AnyRef, at: Long, i: Int, to: Array[Double], from: Int, run: Int,
      element: Int): Unit = {
    var k = 0
    element match {
      case Doubles =>
        while (k < run) { to(from + k) = Platform.getDouble(base, at + 8L * (i + k)); k += 1 }
      case Floats =>
        while (k < run) {
          to(from + k) = Platform.getFloat(base, at + 4L * (i + k)).toDouble; k += 1
        }
      case Longs =>
        while (k < run) {
          to(from + k) = Platform.getLong(base, at + 8L * (i + k)).toDouble; k += 1
        }
      case Ints =>
        while (k < run) { to(from + k) = Platform.getInt(base, at + 4L * (i + k)).toDouble; k += 1 }
      case Shorts =>
        while (k < run) {
          to(from + k) = Platform.getShort(base, at + 2L * (i + k)).toDouble; k += 1
        }
      case Bytes8 =>
        while (k < run) { to(from + k) = Platform.getByte(base, at + (i + k)).toDouble; k += 1 }
      case _ => while (k < run) { // FloatRounded
          to(from + k) = Platform.getDouble(base, at + 8L * (i + k)).toFloat.toDouble
          k += 1
        }
    }
  }

  // Whether an unsafe array of n elements has a null: its null bits, a word at a time.
  private def anyNull(values: UnsafeArrayData, n: Int): Boolean = {
    val words = (n + 63) / 64
    var w = 0
    while (w < words &&
        Platform.getLong(values.getBaseObject, values.getBaseOffset + 8 + 8L * w) == 0)
      w += 1
    w < words
  }

  private def arrayAt(row: InternalRow, j: Int): ArrayData = row match {
    case unsafe: UnsafeRow =>
      val slot = unsafe.getLong(j)
      array.pointTo(unsafe.getBaseObject, UnsafeSlot.offset(unsafe.getBaseOffset, slot),
        UnsafeSlot.size(slot))
      array
    case _ => row.getArray(j)
  }

  // The bytes at `j` of a row or an array, counted: read in place where they are unsafe.
  private def addBytes(counts: StringCounts, from: SpecializedGetters, j: Int): Unit =
    from match {
      case unsafe: UnsafeRow =>
        val slot = unsafe.getLong(j)
        counts.add(unsafe.getBaseObject, UnsafeSlot.offset(unsafe.getBaseOffset, slot),
          UnsafeSlot.size(slot), 1)
      case unsafe: UnsafeArrayData =>
        val slot = unsafe.getLong(j)
        counts.add(unsafe.getBaseObject, UnsafeSlot.offset(unsafe.getBaseOffset, slot),
          UnsafeSlot.size(slot), 1)
      case other =>
        val b = other.getBinary(j)
        counts.add(b, Platform.BYTE_ARRAY_OFFSET, b.length, 1)
    }

  /** The partition's figures: rows, then per column its sizes and its numbers or strings. */
  def result(): Array[Byte] = {
    val held = sizes.map(_.lastIndexWhere(_ != 0) + 1)
    var size = 8L
    for (j <- kinds.indices) {
      size += 4 + 8L * held(j)
      size += (if (numbers(j) != null) numbers(j).writtenSize else strings(j).writtenSize)
    }
    // written into an array of its size, handed on as it is: no growing, no copy (a table of
    // strings makes megabytes)
    val bytes = new Sized(math.min(size, Int.MaxValue - 8).toInt)
    val out = new DataOutputStream(bytes)
    out.writeLong(rows)
    for (j <- kinds.indices) {
      out.writeInt(held(j))
      for (k <- 0 until held(j)) out.writeLong(sizes(j)(k))
      if (numbers(j) != null) numbers(j).write(out) else strings(j).write(out)
    }
    out.flush()
    bytes.written
  }
}

private[sparktfrecord] object StatisticsAggregator {
  private final val Number = 0
  private final val Numbers = 1
  private final val Bytes = 2
  private final val ByteLists = 3

  /** How a column's numbers are read: as doubles, floats, ..., or doubles rounded to float32. */
  private final val Doubles = 0
  private final val Floats = 1
  private final val Longs = 2
  private final val Ints = 3
  private final val Shorts = 4
  private final val Bytes8 = 5
  private final val FloatRounded = 6

  private def elementType(t: DataType): DataType = t match {
    case ArrayType(e, _) => e
    case other => other
  }

  /** Each column's kind, decided once; an error naming the column that is none of them. */
  private def kindsOf(schema: StructType): Array[Int] = schema.fields.map { f =>
    val list = f.dataType.isInstanceOf[ArrayType]
    elementType(f.dataType) match {
      case DoubleType | FloatType | LongType | IntegerType | ShortType | ByteType =>
        if (list) Numbers else Number
      case BinaryType | StringType => if (list) ByteLists else Bytes
      case other => throw new IllegalArgumentException(
          s"statistics: column '${f.name}' is ${other.simpleString}: each column must be of " +
            "numbers (double, float or integral), binary or strings, or an array of them")
    }
  }

  private def elementsOf(schema: StructType, rounded: String): Array[Int] =
    schema.fields.zipWithIndex.map { case (f, j) =>
      elementType(f.dataType) match {
        case DoubleType => if (j < rounded.length && rounded(j) == 'f') FloatRounded else Doubles
        case FloatType => Floats
        case LongType => Longs
        case IntegerType => Ints
        case ShortType => Shorts
        case ByteType => Bytes8
        case _ => -1
      }
    }

  /**
   * Every column's figures in one Spark job, merged in the driver: the partitions' figures are
   * merged in the partitions' order as they arrive, while the job's other tasks still run (the
   * merge took a third of the time when it waited for the last task), a partition that ends
   * before an earlier one kept until that one comes. In order, the sums are the same to the last
   * bit whichever task ends first, and the quantile summaries merge as a binary counter carries
   * ([[NumberSummary.addWritten]]): the driver holds and writes a few summaries per column, not
   * one per partition. Written as: the rows; per column, how many rows hold 0, 1, 2, ... values,
   * then its numbers ([[NumberSummary.write]]); then per string column its figures
   * ([[StringCounts.writeFigures]], with `top` values).
   */
  def figures(rows: RDD[InternalRow], schema: StructType, rounded: String, top: Int)
      : Array[Byte] = {
    val aggregate = (it: Iterator[InternalRow]) => {
      val aggregator = new StatisticsAggregator(schema, rounded)
      while (it.hasNext) aggregator.add(it.next())
      aggregator.result()
    }
    val partitions = rows.getNumPartitions
    val arrived = new LinkedBlockingQueue[(Int, Array[Byte])]()
    val job = rows.sparkContext.submitJob[InternalRow, Array[Byte], Unit](
      rows, aggregate, 0 until partitions, (index, part) => arrived.put((index, part)), ())
    val merged = new Merged(schema)
    val early = new Array[Array[Byte]](partitions) // parts come before an earlier one's
    var done = 0
    while (done < partitions) {
      val part = arrived.poll(50, TimeUnit.MILLISECONDS)
      if (part != null) {
        early(part._1) = part._2
        while (done < partitions && early(done) != null) {
          merged.add(early(done))
          early(done) = null
          done += 1
        }
      } else if (job.isCompleted && arrived.isEmpty) {
        Await.result(job, Duration.Inf) // the job's failure, as collect() would throw it
        throw new IllegalStateException(s"statistics: $done of $partitions partitions came")
      }
    }
    merged.written(top)
  }

  /** A stream into an array of `size` bytes, its [[written]] bytes that array when it is full. */
  private final class Sized(size: Int) extends ByteArrayOutputStream(size) {
    def written: Array[Byte] = if (count == buf.length) buf else toByteArray
  }

  /** The figures of the partitions [[add]]ed so far: rows, sizes, numbers and strings. */
  private[sparktfrecord] final class Merged(schema: StructType) {
    private val kinds = kindsOf(schema)
    private val work = new NumberSummary.Work(1) // a merge folds no chunk: none to share but this
    private val strings =
      kinds.map(k => if (k == Bytes || k == ByteLists) new StringCounts else null)
    private val numbers =
      kinds.map(k => if (k == Number || k == Numbers) new NumberSummary(1, work) else null)
    private val sizes = kinds.map(_ => new Array[Long](0))
    private var rows = 0L

    def add(part: Array[Byte]): Unit = {
      val in = new DataInputStream(new ByteArrayInputStream(part))
      rows += in.readLong()
      for (j <- kinds.indices) {
        val held = in.readInt()
        if (held > sizes(j).length) sizes(j) = java.util.Arrays.copyOf(sizes(j), held)
        for (k <- 0 until held) sizes(j)(k) += in.readLong()
        if (strings(j) != null) strings(j).addWritten(in) else numbers(j).addWritten(in)
      }
    }

    def written(top: Int): Array[Byte] = {
      val bytes = new ByteArrayOutputStream()
      val out = new DataOutputStream(bytes)
      out.writeLong(rows)
      for (j <- kinds.indices) {
        out.writeInt(sizes(j).length)
        sizes(j).foreach(out.writeLong)
        if (numbers(j) != null) numbers(j).write(out)
      }
      for (counts <- strings if counts != null) counts.writeFigures(out, top)
      out.flush()
      bytes.toByteArray
    }
  }
}
