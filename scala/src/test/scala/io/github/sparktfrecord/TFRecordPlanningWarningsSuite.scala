package io.github.sparktfrecord

import io.github.sparktfrecord.sql.{TFRecordOptions, TFRecordPlanningWarnings}

/** Which option keys are unknown, and the close match their warning names. */
class TFRecordPlanningWarningsSuite extends UnitSuite {
  import TFRecordPlanningWarnings._

  test("ours, Spark's, Hadoop settings and Spark's internal keys are known, in any case") {
    for (key <- Seq("compression", "COMPRESSION", "codec", "recordType", "recordtype", "path",
        "__partition_columns", "mergeSchema", "pathGlobFilter", "returning_batch",
        "maxRecordsPerFile", "timeZone", "partitionOverwriteMode", "checkpointLocation",
        "writeLocality", "fs.s3a.endpoint", "ignoreCorruptFiles", "splitFiles")) {
      assert(isKnown(key), key)
    }
    for (key <- Seq("compresion", "recordTyp", "header", "partition_by")) {
      assert(!isKnown(key), key)
    }
  }

  test("the warning names the closest option, when one is close") {
    assertEquals(closest("compresion", TFRecordOptions.Names), Some("compression"))
    assertEquals(closest("RECORDTYP", TFRecordOptions.Names), Some("recordType"))
    assertEquals(closest("inferSchemaMaxFile", TFRecordOptions.Names),
      Some("inferSchemaMaxFiles"))
    assertEquals(closest("header", TFRecordOptions.Names), None)
    val message = unknownOptionMessage("compresion")
    assert(message.startsWith("Unknown tfrecord option 'compresion' (ignored); did you mean " +
        "'compression'? Valid options: allowNonTensorFlowCodec, codec, " +
        "columnNameOfCorruptRecord, "),
      message)
    assert(unknownOptionMessage("header").startsWith(
      "Unknown tfrecord option 'header' (ignored). Valid options: "))
  }
}
