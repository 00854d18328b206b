package io.github.sparktfrecord

import java.io.OutputStream

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration

/**
 * Index files, as the `tfrecord` package (PyTorch) and NVIDIA DALI read them to shard a file
 * between workers: one line per record, `<offset> <size>\n` in ASCII decimal, the offset of the
 * record's header in the record stream and its framed size (header, data and footer).
 *
 * The index of a data file `dir/name` is `dir/_name.idx`: Spark's file listing skips names that
 * start with `_`, so a directory with indexes still reads as its data files only.
 *
 * Of compressed files only gzip ones have an index, of offsets in the uncompressed stream: what
 * the `tfrecord` package's `compression_type="gzip"` seeks to. DALI reads uncompressed files only.
 */
object TFRecordIndex {
  final val Prefix = "_"
  final val Suffix = ".idx"

  /** The index of the data file `data`, beside it. */
  def pathFor(data: Path): Path = new Path(data.getParent, Prefix + data.getName + Suffix)

  /** Throws, naming the valid values, unless files of `compression` can have an index. */
  def checkCompression(compression: TFRecordCompression, what: => String): Unit =
    if (compression != TFRecordCompression.None && compression != TFRecordCompression.Gzip) {
      throw TFRecordError.argument(TFRecordError.InvalidOption,
        s"Cannot index $what (compression ${compression.name}): the readers that take an index " +
          "(the tfrecord package for PyTorch, NVIDIA DALI) read uncompressed TFRecord files, " +
          "and the tfrecord package gzip ones. Valid compressions with " +
          s"'${TFRecordOptions.WriteIndexOption}': none, gzip.")
    }

  /**
   * Writes the index of an existing TFRecord file beside it, reading the file through (both CRCs
   * of every record checked unless `verifyChecksums` is off). The index appears whole or not at
   * all ([[AtomicWrite]]). Returns the file's records and bytes.
   */
  def indexFile(file: Path, conf: Configuration, options: TFRecordOptions): (Long, Long) = {
    val fs = file.getFileSystem(conf)
    val length = fs.getFileStatus(file).getLen
    val index = pathFor(file)
    val reader = TFRecordReader.open(file, conf, FramingSettings(options, keepData = false), length)
    var records = 0L
    try {
      // The codec the file was opened with: by its name, the option or its first bytes.
      checkCompression(reader.compression, file.toString)
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
      checkCompression(TFRecordCompression.forFile(path, parsed.compression, hadoopConf), f)
    }
    val conf = spark.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    spark.sparkContext.parallelize(files.toSeq, files.length).map { f =>
      val start = System.nanoTime()
      val (records, bytes) = indexFile(new Path(f), conf.value.value, parsed)
      s"$records\t$bytes\t${System.nanoTime() - start}\t$f"
    }.collect()
  }
}

/**
 * Writes index lines without a String or an array per record, into a buffer of its own (no
 * synchronized call per line), handed to `out` 64 KiB at a time.
 */
private[sparktfrecord] final class IndexWriter(out: OutputStream) extends java.io.Closeable {
  private val buffer = new Array[Byte](1 << 16)
  private var used = 0

  def add(offset: Long, size: Long): Unit = {
    if (buffer.length - used < IndexWriter.MaxLineBytes) flush()
    used = decimal(offset, used)
    buffer(used) = ' '
    used = decimal(size, used + 1)
    buffer(used) = '\n'
    used += 1
  }

  /** Writes `value` (not negative) at `at`; returns where it ends. */
  private def decimal(value: Long, at: Int): Int = {
    var digits = 1
    var rest = value / 10
    while (rest > 0) {
      digits += 1
      rest /= 10
    }
    var v = value
    var i = at + digits
    while (i > at) {
      i -= 1
      buffer(i) = ('0' + (v % 10)).toByte
      v /= 10
    }
    at + digits
  }

  /** Writes the lines added so far to the stream. */
  def flush(): Unit = {
    out.write(buffer, 0, used)
    used = 0
  }

  override def close(): Unit = try flush()
  finally out.close()
}

private[sparktfrecord] object IndexWriter {
  /** Two longs of at most 19 digits, a space and a newline. */
  final val MaxLineBytes = 40
}
