package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

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
    val reader = TFRecordReader.open(new Path(path), new Configuration(), new TFRecordOptions(Map.empty[String, String]))
    try {
      var n = 0L
      while (reader.next()) n += 1
      n
    } finally reader.close()
  }
}
