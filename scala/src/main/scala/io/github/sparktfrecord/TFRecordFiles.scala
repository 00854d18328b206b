package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.types.{DataType, StructType}

/**
 * TFRecord files without a Spark job, for tools on the driver or outside Spark (the CLI's
 * `inspect`, the benchmarks' floor). Paths are Hadoop paths: local files or any file system
 * Hadoop is configured for.
 */
object TFRecordFiles {

  /**
   * Walks the framing of a file (decompressing by extension) and checks both CRCs of every
   * record, parsing nothing: the floor under any reader. Returns the number of records.
   */
  def countRecords(path: String): Long = {
    val options = new TFRecordOptions(Map.empty[String, String])
    val reader = TFRecordReader.open(new Path(path), new Configuration(), options)
    try {
      var n = 0L
      while (reader.next()) n += 1
      n
    } finally reader.close()
  }

  /**
   * Reads a whole file into rows of `schemaJson` (a `StructType` as JSON, `DataType.json`) with
   * the data source's options (`recordType`, `mode`, ...) and returns how many rows it made,
   * exactly as a Spark scan would, without a job. The first bad record fails as in a scan.
   */
  def decodeFile(
      path: String,
      schemaJson: String,
      options: java.util.Map[String, String]): Long = {
    val schema = DataType.fromJson(schemaJson).asInstanceOf[StructType]
    val parsed = new TFRecordOptions(toScala(options))
    TFRecordSchema.validate(schema, parsed.recordType, writing = false)
    val reader = TFRecordReader.open(new Path(path), new Configuration(), parsed)
    try {
      val decode = TFRecordFileFormat.decoder(schema, parsed, path)
      var n = 0L
      while (reader.next()) if (decode(reader) != null) n += 1
      n
    } finally reader.close()
  }

  private def toScala(options: java.util.Map[String, String]): Map[String, String] = {
    val b = Map.newBuilder[String, String]
    val it = options.entrySet().iterator()
    while (it.hasNext) {
      val e = it.next()
      b += e.getKey -> e.getValue
    }
    b.result()
  }
}
