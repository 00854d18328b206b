package io.github.sparktfrecord

import java.io.File
import java.nio.file.Files
import java.util.zip.CRC32C

import org.apache.spark.sql.types._

import io.github.sparktfrecord.framing.TFRecordFraming
import io.github.sparktfrecord.tools.RecordResults

/**
 * [[RecordResults]], the differential tests' oracle: each record's row as exact text, or its
 * error's condition and parameters, going on after a record that does not decode.
 */
class RecordResultsSuite extends UnitSuite {
  import ProtoBytes._

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("record-results-suite").toFile,
    teardown = d => { d.listFiles.foreach(_.delete()); d.delete() })

  private val failFast = java.util.Collections.singletonMap("mode", "FAILFAST")

  /** A file of these records, framed. */
  private def write(d: File, records: Array[Byte]*): String = {
    val file = new File(d, "records.tfrecord")
    val framed = records.map { data =>
      val buf = new Array[Byte](TFRecordFraming.OverheadBytes + data.length)
      System.arraycopy(data, 0, buf, TFRecordFraming.HeaderBytes, data.length)
      TFRecordFraming.frame(new CRC32C, buf, data.length)
      buf
    }
    Files.write(file.toPath, cat(framed: _*))
    file.getPath
  }

  /** Offsets of records of `sizes` data bytes, one after the other. */
  private def offsets(sizes: Int*): Seq[String] =
    sizes.scanLeft(0L)(_ + _ + TFRecordFraming.OverheadBytes).init.map(_.toString)

  private def read(path: String, ddl: String): Seq[Seq[String]] =
    RecordResults.read(path, StructType.fromDDL(ddl).json, failFast).map(_.toSeq).toSeq

  private def floats(values: Float*): Array[Byte] = floatList(packedFloat(values: _*))

  dir.test("every scalar kind as exact text: bits, hex, nulls apart from empty lists") { d =>
    val nan = java.lang.Float.intBitsToFloat(0x7fc00001)
    val record = example(
      entry("b", int64List(packedInt64(1))),
      entry("t", int64List(packedInt64(-128))),
      entry("l", int64List(packedInt64(Long.MinValue))),
      entry("ts", int64List(packedInt64(-1))),
      entry("f", floats(nan)),
      entry("db", floats(-0.0f)),
      entry("dec", floats(1.25f)),
      entry("s", bytesList(field(1, utf8("é")))),
      entry("bin", bytesList(field(1, hex("ff 00")))),
      entry("empty", int64List()),
      entry("fl", floats(1.0f, Float.NegativeInfinity)))
    val path = write(d, record)
    val ddl = "b boolean, t tinyint, l bigint, ts timestamp, f float, db double, " +
      "dec decimal(5,3), s string, bin binary, empty array<bigint>, none array<bigint>, " +
      "fl array<float>"
    assertEquals(read(path, ddl),
      Seq(Seq("row", "0",
        "{b=true,t=-128,l=-9223372036854775808,ts=-1,f=f:7fc00001,db=d:8000000000000000," +
          "dec=dec:1.250,s=s:c3a9,bin=b:ff00,empty=[],none=null,fl=[f:3f800000,f:ff800000]}")))
  }

  dir.test("structs, lists of lists and vectors, dense or sparse, by their values") { d =>
    val vector = new org.apache.spark.ml.linalg.VectorUDT
    val schema = StructType(Seq(
      StructField("st", StructType(Seq(StructField("a", LongType), StructField("b", StringType)))),
      StructField("r", ArrayType(ArrayType(LongType))),
      StructField("dense", vector),
      StructField("sparse", vector)))
    val record = example(
      entry("st/a", int64List(packedInt64(7))),
      entry("r/ragged_flat_values", int64List(packedInt64(1, 2, 3))),
      entry("r/ragged_row_lengths_0", int64List(packedInt64(2, 0, 1))),
      entry("dense", floats(0.0f, 2.0f, -0.0f)),
      entry("sparse/indices", int64List(packedInt64(1, 2))),
      entry("sparse/values", floats(2.0f, -0.0f)),
      entry("sparse/size", int64List(packedInt64(3))))
    val path = write(d, record)
    val got = RecordResults.read(path, schema.json, failFast).map(_.toSeq).toSeq
    val vec = "vec(3){1=d:4000000000000000,2=d:8000000000000000}"
    assertEquals(got,
      Seq(Seq("row", "0",
        s"{st={a=7,b=null},r=[[1,2],[],[3]],dense=$vec,sparse=$vec}")))
  }

  dir.test("a record that does not fit or parse is an error; the next records are read") { d =>
    val good = example(entry("x", int64List(packedInt64(1))))
    val two = example(entry("x", int64List(packedInt64(2))))
    val malformed = hex("0a 05 0a")
    val path = write(d, good, two, malformed, good)
    val at = offsets(good.length, two.length, malformed.length, good.length)
    val got = read(path, "x boolean")
    assertEquals(got.map(_.take(3)),
      Seq(
        Seq("row", at(0), "{x=true}"),
        Seq("error", at(1), TFRecordError.DataMismatch),
        Seq("error", at(2), TFRecordError.MalformedRecord),
        Seq("row", at(3), "{x=true}")))
    val parameters = got(1).drop(3).grouped(2).map(p => p(0) -> p(1)).toMap
    assertEquals(parameters("column"), "x")
    assertEquals(parameters("offset"), at(1))
    assert(parameters("path").endsWith("records.tfrecord"), parameters)
  }

  dir.test("a framing error is the last result, at the broken record's offset") { d =>
    val good = example(entry("x", int64List(packedInt64(1))))
    val path = write(d, good, good)
    val bytes = Files.readAllBytes(new File(path).toPath)
    Files.write(new File(path).toPath, bytes.take(bytes.length - 3))
    val got = read(path, "x bigint")
    assertEquals(got.map(_.take(3)),
      Seq(
        Seq("row", "0", "{x=1}"),
        Seq("error", offsets(good.length, good.length)(1), TFRecordError.Truncated)))
  }

  dir.test("a schema the record type cannot hold is one error, before any record") { d =>
    val path = write(d, example())
    val got = read(path, "m map<string, bigint>")
    assertEquals(got.map(_.take(3)), Seq(Seq("error", "-1", TFRecordError.UnsupportedType)))
  }
}
