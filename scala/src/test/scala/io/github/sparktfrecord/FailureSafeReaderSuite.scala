package io.github.sparktfrecord

import java.io.ByteArrayInputStream
import java.util.zip.CRC32C

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.StructType

import ErrorText._

import io.github.sparktfrecord.framing.{TFRecordFraming, TFRecordReader}
import io.github.sparktfrecord.sql.{FailureSafeReader, TFRecordOptions, TFRecordRows}

/**
 * The `mode` option over a file of three records, the second of which does not fit the schema:
 * the same three outcomes for a flat schema and for a nested one ([[FailureSafeReader]]).
 */
class FailureSafeReaderSuite extends UnitSuite {
  import ProtoBytes._
  import TFRecordFraming._

  private def framed(data: Array[Byte]): Array[Byte] = {
    val buf = new Array[Byte](OverheadBytes + data.length)
    System.arraycopy(data, 0, buf, HeaderBytes, data.length)
    frame(new CRC32C, buf, data.length)
    buf
  }

  /** Records with feature `name` holding 1, then 2 and 3 (two values: not a scalar), then 4. */
  private def records(name: String): Seq[Array[Byte]] =
    Seq(Seq(1L), Seq(2L, 3L), Seq(4L)).map(v => example(entry(name, int64List(packedInt64(v: _*)))))

  private val flat = StructType.fromDDL("a bigint, _corrupt_record binary")
  private val nested = StructType.fromDDL("s struct<a bigint>, _corrupt_record binary")

  /** The value of `a` in a row of `schema`, or null. */
  private def a(row: InternalRow, schema: StructType): Any =
    if (schema == flat) { if (row.isNullAt(0)) null else row.getLong(0) }
    else if (row.isNullAt(0)) null
    else row.getStruct(0, 1).getLong(0)

  /** Each record read in `mode` as (a, the corrupt-record column as bytes), null when dropped. */
  private def read(schema: StructType, mode: String, feature: String): Seq[Any] = {
    val datas = records(feature)
    val file = cat(datas.map(framed): _*)
    val options = new TFRecordOptions(Map("mode" -> mode))
    val reader = new TFRecordReader(new ByteArrayInputStream(file), "test.tfrecord", 0L,
      Long.MaxValue, file.length.toLong, options.framing(keepData = true))
    val decode = TFRecordRows.decoder(schema, options, "test.tfrecord")
    val out = Seq.newBuilder[Any]
    while (reader.next()) {
      val row = decode(reader)
      out +=
        (if (row == null) null
         else (a(row, schema), if (row.isNullAt(1)) null else row.getBinary(1).toSeq))
    }
    out.result()
  }

  for ((schema, feature) <- Seq(flat -> "a", nested -> "s/a")) {
    val kind = if (schema == flat) "flat" else "nested"

    test(s"FAILFAST, $kind: the bad record fails the read, naming its file and offset") {
      val e = intercept[TFRecordDataException](read(schema, "FAILFAST", feature))
      val second = framed(records(feature).head).length.toLong
      assertEquals((e.path, e.offset), ("test.tfrecord", second))
      assert(e.getMessage.endsWith(s"in the record at byte offset $second of test.tfrecord"),
        e.getMessage)
    }

    test(s"DROPMALFORMED, $kind: the bad record is dropped") {
      assertEquals(read(schema, "DROPMALFORMED", feature), Seq((1L, null), null, (4L, null)))
    }

    test(s"PERMISSIVE, $kind: the bad record is nulls and its bytes") {
      assertEquals(read(schema, "PERMISSIVE", feature),
        Seq((1L, null), (null, records(feature)(1).toSeq), (4L, null)))
    }
  }

  test("the corrupt-record column: only in PERMISSIVE, and binary or string") {
    def column(mode: String, schema: StructType): Int = FailureSafeReader.corruptColumn(
      schema, schema, new TFRecordOptions(Map("mode" -> mode)))
    assertEquals(column("PERMISSIVE", flat), 1)
    assertEquals(column("DROPMALFORMED", flat), -1)
    assertEquals(column("FAILFAST", flat), -1)
    assertEquals(column("PERMISSIVE", StructType.fromDDL("a bigint")), -1)
    val permissive = new TFRecordOptions(Map("mode" -> "PERMISSIVE"))
    FailureSafeReader.checkCorruptColumn(StructType.fromDDL("_corrupt_record string"), permissive)
    val e = intercept[IllegalArgumentException](FailureSafeReader.checkCorruptColumn(
      StructType.fromDDL("_corrupt_record int"), permissive))
    assertEquals(e.text,
      "The corrupt-record column '_corrupt_record' must be binary or " +
        "string, not int")
    FailureSafeReader.checkCorruptColumn(StructType.fromDDL("_corrupt_record int"),
      new TFRecordOptions(Map("mode" -> "DROPMALFORMED")))
  }
}
