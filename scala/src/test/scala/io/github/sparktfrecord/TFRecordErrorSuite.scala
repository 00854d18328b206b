package io.github.sparktfrecord

import scala.annotation.nowarn

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.{RecordType, TFRecordSchema}
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * The errors' conditions, SQLSTATEs and message parameters (the pytest suite checks them end to
 * end, from PySpark and from a Spark Connect client).
 */
class TFRecordErrorSuite extends UnitSuite {
  import TFRecordError._

  /** The condition as Spark reads it: `getErrorClass` is on 3.5 and (calling ours) on 4.x. */
  @nowarn("cat=deprecation")
  private def conditionOf(e: SparkThrowable): String = e.getErrorClass

  test("an invalid option: condition, SQLSTATE, parameters and the message as before") {
    val e = intercept[TFRecordArgumentException](
      new TFRecordOptions(Map(TFRecordOptions.ModeOption -> "lenient")))
    assertEquals(conditionOf(e), InvalidOption)
    assertEquals(e.getSqlState, "42K06")
    assertEquals(e.getMessage,
      "[TFRECORD_INVALID_OPTION] Invalid value 'lenient' for TFRecord " +
        "option 'mode'. Valid values: FAILFAST, PERMISSIVE, DROPMALFORMED.")
    val p = e.getMessageParameters
    assertEquals((p.get("option"), p.get("value"), p.get("valid")),
      ("mode", "lenient", "FAILFAST, PERMISSIVE, DROPMALFORMED"))
    assert(e.isInstanceOf[IllegalArgumentException])
  }

  test("an unsupported type names the column, its type and the record type") {
    val e = intercept[TFRecordArgumentException](TFRecordSchema.validate(
      StructType(Seq(StructField("m", MapType(StringType, LongType)))), RecordType.Example,
      writing = true))
    assertEquals(e.condition, UnsupportedType)
    assertEquals(e.getSqlState, "0A000")
    assertEquals(e.parameters - "reason",
      Map("column" -> "m", "type" -> "map<string,bigint>", "recordType" -> "Example"))
  }

  test("a corrupt record: the file and the offset as parameters, SQLSTATE KD000") {
    val e = new TFRecordCorruptException(Truncated, "Truncated TFRecord: 5 of 12 header bytes",
      "file:/d/part-0.tfrecord", 1234L)
    assertEquals(e.getMessage,
      "[TFRECORD_CORRUPT_RECORD.TRUNCATED] Truncated TFRecord: 5 of " +
        "12 header bytes at byte offset 1234 of file:/d/part-0.tfrecord")
    assertEquals(e.getSqlState, "KD000")
    assertEquals(e.parameters,
      Map("reason" -> "Truncated TFRecord: 5 of 12 header bytes",
        "path" -> "file:/d/part-0.tfrecord", "offset" -> "1234"))
    assert(e.isInstanceOf[java.io.IOException] && !e.isInternalError)
  }

  test("a value that does not fit: file, offset and column; on write the column alone") {
    val read = TFRecordDataException.mismatch("x", "Column 'x' (int) cannot hold the value 2^40",
      "file:/d/p.tfrecord", 30L)
    assertEquals(read.getSqlState, "22000")
    assertEquals(read.parameters - "reason",
      Map("path" -> "file:/d/p.tfrecord", "offset" -> "30", "column" -> "x"))
    assert(read.getMessage.endsWith(", in the record at byte offset 30 of file:/d/p.tfrecord"))
    val write = TFRecordError.writeError(DataMismatch, "y", "Column 'y' is null")
    assertEquals(write.getMessage, "[TFRECORD_DATA_MISMATCH] Column 'y' is null")
    assertEquals(write.parameters, Map("column" -> "y", "reason" -> "Column 'y' is null"))
  }

  test("every condition has its SQLSTATE and is documented in docs/errors.md") {
    val root = sys.props.getOrElse("sparktfrecord.root", fail("-Dsparktfrecord.root unset"))
    val doc = new String(java.nio.file.Files.readAllBytes(
        java.nio.file.Paths.get(root, "docs", "errors.md")), "UTF-8")
    for (c <- All) {
      assert(sqlState(c).matches("[0-9A-Z]{5}"), c)
      assert(doc.contains(s"`$c`"), s"docs/errors.md does not list `$c`")
    }
    assertEquals(All.distinct.size, 13)
  }
}
