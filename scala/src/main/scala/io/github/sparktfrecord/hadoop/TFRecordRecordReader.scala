package io.github.sparktfrecord.hadoop

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.io.{BytesWritable, NullWritable}
import org.apache.hadoop.mapreduce.{InputSplit, RecordReader, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.input.FileSplit

import io.github.sparktfrecord.framing.{HadoopCompat, TFRecordReader}
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * The records of one split of [[TFRecordInputFormat]]: each record's data as the key (its buffer
 * reused from record to record), `NullWritable` as the value.
 */
private[sparktfrecord] final class TFRecordRecordReader
  extends RecordReader[BytesWritable, NullWritable] {
  private var reader: TFRecordReader = _
  private val key = new BytesWritable()
  private var start = 0L
  private var length = 1L

  override def initialize(split: InputSplit, context: TaskAttemptContext): Unit = {
    val file = split.asInstanceOf[FileSplit]
    val conf = context.getConfiguration
    val path = file.getPath
    val options = TFRecordRecordReader.jobOptions(conf)
    val fileLength = path.getFileSystem(conf).getFileStatus(path).getLen
    start = file.getStart
    length = math.max(1L, file.getLength)
    reader = TFRecordReader.openPart(path, conf, options.framing(keepData = true),
      start, file.getLength, fileLength)
  }

  override def nextKeyValue(): Boolean =
    if (reader.next()) {
      key.set(reader.data, reader.dataStart, reader.length)
      true
    } else false

  override def getCurrentKey: BytesWritable = key
  override def getCurrentValue: NullWritable = NullWritable.get()
  override def getProgress: Float =
    math.min(1f, math.max(0f, (reader.position - start).toFloat / length))
  override def close(): Unit = if (reader != null) reader.close()
}

private[sparktfrecord] object TFRecordRecordReader {

  /**
   * The options of a Hadoop job (the Hadoop formats'): the keys of `conf` that start with
   * `tfrecord.`, over Spark's defaults where a session would give them.
   */
  def jobOptions(conf: Configuration): TFRecordOptions = TFRecordOptions.sessionFree(
    HadoopCompat.propsWithPrefix(conf, TFRecordOptions.HadoopPrefix))
}
