package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import org.apache.spark.sql.types.{DataType, StructType}

/**
 * Looks inside TFRecord files without a Spark job, for tools on the driver or outside Spark: the
 * JVM side of the CLI's `inspect` and of `spark_tfrecord.local`, and the benchmarks' floor. Paths
 * are Hadoop paths: local files or any file system Hadoop is configured for. Options are the data
 * source's, with Spark's defaults where a session would give them
 * ([[TFRecordOptions.sessionFree]]).
 */
object TFRecordInspector {

  /**
   * Walks the framing of a file (decompressing by extension) and checks both CRCs of every
   * record, parsing nothing: the floor under any reader. Returns the number of records.
   */
  def countRecords(path: String): Long = {
    val options = TFRecordOptions.sessionFree(java.util.Collections.emptyMap[String, String]())
    val reader = openFile(path, options, keepData = false)
    try {
      var n = 0L
      while (reader.next()) n += 1
      n
    } finally reader.close()
  }

  /**
   * The data files under `path` (itself when it is a file), recursively, skipping names that
   * start with `_` or `.` as Spark does, sorted by path: each as "size<TAB>path".
   */
  def listFiles(path: String): Array[String] = {
    val root = new Path(path)
    val fs = root.getFileSystem(new Configuration())
    val found = Array.newBuilder[String]
    def visit(status: FileStatus): Unit = {
      val name = status.getPath.getName
      if (status.getPath != root && (name.startsWith("_") || name.startsWith("."))) return
      if (status.isDirectory) fs.listStatus(status.getPath).foreach(visit)
      else found += s"${status.getLen}\t${status.getPath}"
    }
    visit(fs.getFileStatus(root))
    found.result().sortBy(_.split('\t')(1))
  }

  /** The schema the data source would infer for these files, as `StructType` JSON. */
  def inferSchemaJson(paths: Array[String], options: java.util.Map[String, String]): String = {
    val conf = new Configuration()
    val statuses = paths.toSeq.map { p =>
      val path = new Path(p)
      path.getFileSystem(conf).getFileStatus(path)
    }
    TFRecordSchemaInferencer.infer(statuses, TFRecordOptions.sessionFree(options), conf).json
  }

  /**
   * The first `limit` records of the files, decoded with `schemaJson`, each as one JSON object.
   * Bytes (string and binary columns) are shown as text when they are valid UTF-8, else as
   * `0x…` hex; NaN and infinities as strings.
   */
  def readRecordsJson(
      paths: Array[String],
      schemaJson: String,
      options: java.util.Map[String, String],
      limit: Int): Array[String] = {
    val schema = DataType.fromJson(schemaJson).asInstanceOf[StructType]
    val parsed = TFRecordOptions.sessionFree(options)
    val out = Array.newBuilder[String]
    var n = 0
    val it = paths.iterator
    while (n < limit && it.hasNext) {
      val path = it.next()
      val reader = openFile(path, parsed, keepData = true)
      try {
        val decode = TFRecordFileFormat.decoder(schema, parsed, path)
        while (n < limit && reader.next()) {
          val row = decode(reader)
          if (row != null) {
            out += JsonText.row(row, schema)
            n += 1
          }
        }
      } finally reader.close()
    }
    out.result()
  }

  private def openFile(
      file: String,
      options: TFRecordOptions,
      keepData: Boolean): TFRecordReader = {
    val path = new Path(file)
    val conf = new Configuration()
    val length = path.getFileSystem(conf).getFileStatus(path).getLen
    TFRecordReader.open(path, conf, FramingSettings(options, keepData), length)
  }
}
