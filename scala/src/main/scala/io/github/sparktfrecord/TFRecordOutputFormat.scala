package io.github.sparktfrecord

import org.apache.hadoop.io.{BytesWritable, Writable}
import org.apache.hadoop.mapreduce.{RecordWriter, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

/**
 * Writes TFRecord files from Hadoop MapReduce and Spark RDDs (`mapreduce` API): each key's bytes
 * become one record; values are ignored. Compression follows `tfrecord.compression` (`gzip`,
 * `deflate`; `tfrecord.allowNonTensorFlowCodec` for others) in the job configuration, else
 * Hadoop's own output compression settings. `tfrecord.writeIndex=true` writes each file's index
 * beside it ([[TFRecordIndex]]).
 *
 * {{{
 *   rdd.map(bytes => (new BytesWritable(bytes), NullWritable.get()))
 *     .saveAsNewAPIHadoopFile(path, classOf[BytesWritable], classOf[NullWritable],
 *       classOf[TFRecordOutputFormat])
 * }}}
 */
class TFRecordOutputFormat extends FileOutputFormat[BytesWritable, Writable] {

  override def getRecordWriter(
      context: TaskAttemptContext): RecordWriter[BytesWritable, Writable] = {
    val conf = context.getConfiguration
    val options = TFRecordInputFormat.jobOptions(conf)
    val compression =
      if (options.compression != TFRecordCompression.None) options.compression
      else if (FileOutputFormat.getCompressOutput(context)) {
        val codec = FileOutputFormat.getOutputCompressorClass(context,
          classOf[
            org.apache.hadoop.io.compress.GzipCodec]).getName
        TFRecordCompression.parse("mapreduce.output.fileoutputformat.compress.codec", codec,
          options.allowNonTensorFlowCodec)
      } else TFRecordCompression.None
    val extension = TFRecordWriter.Extension + compression.extension
    val file = getDefaultWorkFile(context, extension)
    if (options.writeIndex) TFRecordIndex.checkCompression(compression, file.toString)
    val writer = new TFRecordWriter(file, conf, compression, index = options.writeIndex)
    new RecordWriter[BytesWritable, Writable] {
      override def write(key: BytesWritable, value: Writable): Unit =
        writer.write(key.getBytes, key.getLength)

      override def close(context: TaskAttemptContext): Unit = writer.close()
    }
  }
}
