package io.github.sparktfrecord.hadoop

import org.apache.hadoop.io.{BytesWritable, Writable}
import org.apache.hadoop.mapreduce.{RecordWriter, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

import io.github.sparktfrecord.framing.{IndexWriter, TFRecordCompression, TFRecordWriter}

/**
 * The records of one task of [[TFRecordOutputFormat]], into `file`: each key's bytes become one
 * record; values are ignored.
 */
private[sparktfrecord] final class TFRecordRecordWriter(writer: TFRecordWriter)
  extends RecordWriter[BytesWritable, Writable] {

  override def write(key: BytesWritable, value: Writable): Unit =
    writer.write(key.getBytes, key.getLength)

  override def close(context: TaskAttemptContext): Unit = writer.close()
}

private[sparktfrecord] object TFRecordRecordWriter {

  /**
   * The writer of a task's file: compressed as `tfrecord.compression` says, else as Hadoop's own
   * output compression settings say; with its index beside it if `tfrecord.writeIndex` is set.
   * `workFile` names the task's file for an extension.
   */
  def apply(
      context: TaskAttemptContext,
      workFile: String => org.apache.hadoop.fs.Path): TFRecordRecordWriter = {
    val conf = context.getConfiguration
    val options = TFRecordRecordReader.jobOptions(conf)
    val compression =
      if (options.compression != TFRecordCompression.None) options.compression
      else if (FileOutputFormat.getCompressOutput(context)) {
        val codec = FileOutputFormat.getOutputCompressorClass(context,
          classOf[org.apache.hadoop.io.compress.GzipCodec]).getName
        TFRecordCompression.parse("mapreduce.output.fileoutputformat.compress.codec", codec,
          options.allowNonTensorFlowCodec)
      } else TFRecordCompression.None
    val file = workFile(TFRecordWriter.Extension + compression.extension)
    if (options.writeIndex) IndexWriter.checkCompression(compression, file.toString)
    new TFRecordRecordWriter(
      new TFRecordWriter(file, conf, compression, index = options.writeIndex))
  }
}
