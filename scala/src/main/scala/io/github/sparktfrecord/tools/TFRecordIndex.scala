package io.github.sparktfrecord.tools

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration

import io.github.sparktfrecord.SparkShims
import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.{AtomicWrite, IndexWriter, TFRecordCompression}
import io.github.sparktfrecord.framing.{TFRecordFraming, TFRecordReader}
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * Writes the index files ([[IndexWriter]]) of existing TFRecord files: `spark-tfrecord index`.
 */
object TFRecordIndex {
  /**
   * Writes the index of an existing TFRecord file beside it, reading the file through (both CRCs
   * of every record checked unless `verifyChecksums` is off). The index appears whole or not at
   * all ([[AtomicWrite]]). Returns the file's records and bytes.
   */
  def indexFile(file: Path, conf: Configuration, options: TFRecordOptions): (Long, Long) = {
    val fs = file.getFileSystem(conf)
    val length = fs.getFileStatus(file).getLen
    val index = IndexWriter.pathFor(file)
    val reader = TFRecordReader.open(file, conf, options.framing(keepData = false), length)
    var records = 0L
    try {
      // The codec the file was opened with: by its name, the option or its first bytes.
      IndexWriter.checkCompression(reader.compression, file.toString)
      AtomicWrite(fs, index) { out =>
        val writer = new IndexWriter(out)
        while (reader.next()) {
          writer.add(reader.offset, TFRecordFraming.OverheadBytes + reader.length)
          records += 1
        }
        writer.flush()
      }
    } finally reader.close()
    (records, length)
  }

  /**
   * Writes the index of every TFRecord file Spark would read at `paths` (files, directories,
   * globs; partition directories included, `_` and `.` names skipped), one Spark task per file.
   * Returns one line per file, `records<TAB>bytes<TAB>nanoseconds<TAB>path` (the time its task
   * took to index it), sorted by path.
   */
  def indexFiles(
      spark: SparkSession,
      paths: java.util.List[String],
      options: java.util.Map[String, String]): Array[String] = {
    import SparkShims.Converters._
    val readOptions =
      options.asScala.toMap + (TFRecordOptions.RecordTypeOption -> RecordType.ByteArray.name)
    val parsed = new TFRecordOptions(readOptions)
    val files = spark.read.format("tfrecord").options(readOptions)
      .load(paths.asScala.toSeq: _*).inputFiles.sorted
    if (files.isEmpty) return Array.empty
    val hadoopConf = SparkShims.hadoopConf(spark, readOptions)
    files.foreach { f =>
      val path = new Path(f)
      val compression = TFRecordCompression.forFile(path, parsed.compression, hadoopConf)
      IndexWriter.checkCompression(compression, f)
    }
    val conf = spark.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    spark.sparkContext.parallelize(files.toSeq, files.length).map { f =>
      val start = System.nanoTime()
      val (records, bytes) = indexFile(new Path(f), conf.value.value, parsed)
      s"$records\t$bytes\t${System.nanoTime() - start}\t$f"
    }.collect()
  }
}
