package io.github.sparktfrecord

import org.apache.hadoop.io.{BytesWritable, Writable}
import org.apache.hadoop.mapreduce.{RecordWriter, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

import io.github.sparktfrecord.hadoop.TFRecordRecordWriter

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
      context: TaskAttemptContext): RecordWriter[BytesWritable, Writable] =
    TFRecordRecordWriter(context, extension => getDefaultWorkFile(context, extension))
}
