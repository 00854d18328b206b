package io.github.sparktfrecord

import java.io.BufferedOutputStream
import java.util.zip.CRC32C

import org.apache.hadoop.io.{BytesWritable, Writable}
import org.apache.hadoop.mapreduce.{RecordWriter, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

/**
 * Writes TFRecord files from Hadoop MapReduce and Spark RDDs (`mapreduce` API): each key's bytes
 * become one record; values are ignored. Compression follows `tfrecord.compression` (`gzip`,
 * `deflate`) in the job configuration, or Hadoop's own output compression settings.
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
    val options = TFRecordInputFormat.options(conf)
    val compression =
      if (options.compression != TFRecordCompression.None) options.compression
      else if (FileOutputFormat.getCompressOutput(context)) {
        val codec = FileOutputFormat.getOutputCompressorClass(context, classOf[
          org.apache.hadoop.io.compress.GzipCodec]).getName
        TFRecordCompression.parse("mapreduce.output.fileoutputformat.compress.codec", codec,
          options.allowNonTensorFlowCodec)
      } else TFRecordCompression.None
    val extension = TFRecordOutputWriterFactory.Extension + compression.extension
    val file = getDefaultWorkFile(context, extension)
    val raw = file.getFileSystem(conf).create(file, false)
    val out = new BufferedOutputStream(compression.compress(raw, conf), 1 << 16)
    new RecordWriter[BytesWritable, Writable] {
      private val crc = new CRC32C
      private var buf = new Array[Byte](1 << 12)

      override def write(key: BytesWritable, value: Writable): Unit = {
        val n = key.getLength
        if (buf.length < n + TFRecordFraming.OverheadBytes) {
          buf = new Array[Byte](math.max(n + TFRecordFraming.OverheadBytes, buf.length * 2))
        }
        System.arraycopy(key.getBytes, 0, buf, TFRecordFraming.HeaderBytes, n)
        out.write(buf, 0, TFRecordFraming.frame(crc, buf, n))
      }

      override def close(context: TaskAttemptContext): Unit = out.close()
    }
  }
}
