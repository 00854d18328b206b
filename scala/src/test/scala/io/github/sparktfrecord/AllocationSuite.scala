package io.github.sparktfrecord

import java.io.ByteArrayInputStream
import java.lang.management.ManagementFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.codec.{ExampleDeserializer, ExampleSerializer}
import io.github.sparktfrecord.framing.{FramingSettings, RecordBuffer, TFRecordCompression}
import io.github.sparktfrecord.framing.{TFRecordFraming, TFRecordReader}

/**
 * The hot loops allocate nothing per record once warm: the deserializer (all columns, one column
 * of many, a SequenceExample), the serializer and the framing reader. Measured with the JVM's
 * count of the bytes this thread allocated; one object per record would be 16 bytes or more.
 */
class AllocationSuite extends UnitSuite {
  private val threads =
    ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]

  private def allocated(): Long = threads.getThreadAllocatedBytes(Thread.currentThread().getId)

  /**
   * The fewest bytes `records` calls of `body` allocated in one of several rounds (the first
   * rounds warm the JIT up).
   */
  private def bytesPerRecord(records: Int)(body: Int => Unit): Double = {
    var best = Long.MaxValue
    var round = 0
    while (round < 8) {
      val before = allocated()
      var i = 0
      while (i < records) {
        body(i)
        i += 1
      }
      best = math.min(best, allocated() - before)
      round += 1
    }
    best.toDouble / records
  }

  private val schema = StructType(Seq(
    StructField("id", LongType),
    StructField("label", IntegerType),
    StructField("weight", FloatType),
    StructField("name", StringType),
    StructField("raw", BinaryType),
    StructField("embedding", ArrayType(FloatType)),
    StructField("tokens", ArrayType(LongType)),
    StructField("tags", ArrayType(StringType))))

  private def row(i: Int): InternalRow = InternalRow(
    i.toLong * 1000003L, i % 7, i * 0.5f, UTF8String.fromString(s"name-$i"),
    Array.tabulate[Byte](i % 40)(_.toByte),
    new GenericArrayData(Array.tabulate[Any](16)(j => (i + j).toFloat)),
    new GenericArrayData(Array.tabulate[Any](i % 30)(j => (j - 15).toLong << (j % 60))),
    new GenericArrayData(Array.tabulate[Any](3)(j => UTF8String.fromString(s"t$j"))))

  private val rows: Array[InternalRow] = Array.tabulate(64)(row)

  /** The rows as serialized Examples. */
  private lazy val records: Array[Array[Byte]] = {
    val serializer = new ExampleSerializer(schema, RecordType.Example)
    rows.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }
  }

  private def assertNoAllocation(what: String, perRecord: Double): Unit =
    assert(perRecord < 1.0, s"$what allocates $perRecord bytes per record")

  test("serializing a row allocates nothing") {
    val serializer = new ExampleSerializer(schema, RecordType.Example)
    assertNoAllocation("the serializer",
      bytesPerRecord(200000)(i => serializer.serialize(rows(i & 63))))
  }

  test("deserializing every column allocates nothing") {
    val deserializer = new ExampleDeserializer(schema, RecordType.Example, "mem")
    val sum = bytesPerRecord(200000) { i =>
      val data = records(i & 63)
      deserializer.decode(data, 0, data.length, 0L)
    }
    assertNoAllocation("the deserializer", sum)
    val r = deserializer.decode(records(5), 0, records(5).length, 0L)
    assertEquals(r.getLong(0), 5L * 1000003L)
    assertEquals(r.getArray(5).numElements(), 16)
  }

  test("one column of many allocates nothing") {
    val one = StructType(Seq(StructField("tokens", ArrayType(LongType))))
    val deserializer = new ExampleDeserializer(one, RecordType.Example, "mem")
    assertNoAllocation("one column",
      bytesPerRecord(200000) { i =>
        val data = records(i & 63)
        deserializer.decode(data, 0, data.length, 0L)
      })
  }

  test("both paths, and the layout prediction, allocate nothing: every column, one of many") {
    for (s <- Seq(schema, StructType(Seq(StructField("tokens", ArrayType(LongType)))));
      fastPath <- Seq(true, false)) {
      val decoder = new ExampleDeserializer(s, RecordType.Example, "mem", fastPath = fastPath)
      val perRecord = bytesPerRecord(200000) { i =>
        val data = records(i & 63)
        decoder.decode(data, 0, data.length, 0L)
      }
      assert(decoder.triesFastPath == fastPath)
      // The fast path read them through its layout prediction.
      assert(decoder.predictsLayout == fastPath)
      assertNoAllocation(s"fastPath=$fastPath, ${s.simpleString}", perRecord)
    }
  }

  test("a SequenceExample's feature lists allocate nothing") {
    val sequence = StructType(Seq(
      StructField("id", LongType),
      StructField("frames", ArrayType(ArrayType(FloatType))),
      StructField("words", ArrayType(ArrayType(StringType)))))
    val serializer = new ExampleSerializer(sequence, RecordType.SequenceExample)
    val steps = (n: Int, f: Int => Any) =>
      new GenericArrayData(
        Array.tabulate[Any](n)(j => new GenericArrayData(Array.fill[Any](3)(f(j)))))
    val input = Array.tabulate(16)(i =>
      InternalRow(i.toLong, steps(i % 5, j => j.toFloat),
        steps(i % 3, j => UTF8String.fromString(s"w$j"))))
    assertNoAllocation("the SequenceExample serializer",
      bytesPerRecord(100000)(i => serializer.serialize(input(i & 15))))
    val data = input.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }
    val deserializer = new ExampleDeserializer(sequence, RecordType.SequenceExample, "mem")
    assertNoAllocation("the SequenceExample deserializer",
      bytesPerRecord(100000) { i =>
        val d = data(i & 15)
        deserializer.decode(d, 0, d.length, 0L)
      })
  }

  test("sparse vectors (vectorLayout sparse) allocate nothing, written and read") {
    val s = StructType(Seq(StructField("id", LongType),
      StructField("v", new org.apache.spark.ml.linalg.VectorUDT)))
    // VectorUDT's storage of a sparse vector: type 0, size, indices, values.
    val input = Array.tabulate(16)(i =>
      InternalRow(i.toLong,
        InternalRow(0.toByte, 1 << 20,
          new GenericArrayData(Array.tabulate[Any](i)(j => j * 1000 + i)),
          new GenericArrayData(Array.tabulate[Any](i)(j => j + 0.5)))))
    val serializer = new ExampleSerializer(s, RecordType.Example, "/", sparseVectors = true)
    assertNoAllocation("the sparse vector serializer",
      bytesPerRecord(100000)(i => serializer.serialize(input(i & 15))))
    val data = input.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }
    val deserializer = new ExampleDeserializer(s, RecordType.Example, "mem")
    assertNoAllocation("the sparse vector deserializer",
      bytesPerRecord(100000) { i =>
        val d = data(i & 15)
        deserializer.decode(d, 0, d.length, 0L)
      })
    val r = deserializer.decode(data(7), 0, data(7).length, 0L).getStruct(1, 4)
    assertEquals((r.getInt(1), r.getArray(2).toIntArray.toSeq, r.getArray(3).toDoubleArray.toSeq),
      (1 << 20, Seq.tabulate(7)(j => j * 1000 + 7), Seq.tabulate(7)(j => j + 0.5)))
  }

  test("lists of lists in an Example (ragged) allocate nothing, written and read") {
    val s = StructType.fromDDL("id bigint, x array<array<bigint>>, " +
      "y array<array<array<float>>>, e array<struct<n bigint, tokens array<int>>>")
    val toUnsafe = UnsafeProjection.create(s)
    val lists = (n: Int, f: Int => Any) =>
      new GenericArrayData(Array.tabulate[Any](n)(j =>
        new GenericArrayData(Array.tabulate[Any](
          j % 4)(f))))
    val input = Array.tabulate(16)(i =>
      toUnsafe(InternalRow(i.toLong, lists(i % 6, j => j.toLong << (j * 9)),
        new GenericArrayData(Array.tabulate[Any](i % 3)(j => lists(j + 1, _ * 0.5f))),
        new GenericArrayData(Array.tabulate[Any](i % 4)(j =>
          InternalRow(j.toLong,
            new GenericArrayData(Array.tabulate[Any](j)(k => k)))))))
        .copy())
    val serializer = new ExampleSerializer(s, RecordType.Example)
    // Numbers: an unsafe array makes a UTF8String object of each string it is asked for.
    assertNoAllocation("the ragged serializer",
      bytesPerRecord(100000)(i => serializer.serialize(input(i & 15))))
    // The flat columns the reader reads them into (a nested schema's assembler copies bytes).
    val flat = StructType.fromDDL("id bigint, x array<array<bigint>>, " +
      "y array<array<array<float>>>, `e/tokens` array<array<int>>")
    val data = input.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }
    val deserializer = new ExampleDeserializer(flat, RecordType.Example, "mem")
    assertNoAllocation("the ragged deserializer",
      bytesPerRecord(100000) { i =>
        val d = data(i & 15)
        deserializer.decode(d, 0, d.length, 0L)
      })
    val r = deserializer.decode(data(5), 0, data(5).length, 0L)
    assertEquals((0 until 5).map(j => r.getArray(1).getArray(j).toLongArray.toSeq),
      (0 until 5).map(j => (0 until j % 4).map(k => k.toLong << (k * 9))))
    assertEquals(r.getArray(3).numElements(), 1)
  }

  test("the framing reader allocates nothing per record") {
    val writer = new RecordBuffer
    val out = new java.io.ByteArrayOutputStream
    val crc = new java.util.zip.CRC32C
    records.foreach { r =>
      val buf = writer.reserve(r.length)
      System.arraycopy(r, 0, buf, TFRecordFraming.HeaderBytes, r.length)
      out.write(buf, 0, TFRecordFraming.frame(crc, buf, r.length))
    }
    val file = out.toByteArray
    for (keepData <- Seq(true, false)) {
      val settings = FramingSettings(TFRecordCompression.None, Int.MaxValue,
        verifyChecksums = true, keepData = keepData)
      // One reader per pass over the 64 records: its buffers are the only allocation.
      val perRecord = bytesPerRecord(2000) { _ =>
        val reader = new TFRecordReader(new ByteArrayInputStream(file), "mem", 0L, Long.MaxValue,
          file.length.toLong, settings)
        var n = 0
        while (reader.next()) n += 1
        if (n != 64) fail(s"$n records")
      } / 64
      val readerBytes = TFRecordReader.BufferBytes + 1024
      assert(perRecord * 64 < readerBytes,
        s"keepData=$keepData: ${perRecord * 64} bytes per pass over 64 records")
    }
  }
}
