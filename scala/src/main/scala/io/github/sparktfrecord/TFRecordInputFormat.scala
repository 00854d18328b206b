package io.github.sparktfrecord

import java.util.{List => JList}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.hadoop.io.{BytesWritable, NullWritable}
import org.apache.hadoop.mapred.JobConf
import org.apache.hadoop.mapreduce.{InputSplit, JobContext, RecordReader, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat
import org.apache.hadoop.mapreduce.task.JobContextImpl

import io.github.sparktfrecord.hadoop.TFRecordRecordReader

/**
 * TFRecord files for Hadoop MapReduce and Spark RDDs (`mapreduce` API): each record's data as
 * the key, `NullWritable` as the value. Uncompressed files split exactly as the data source
 * splits them; `.gz` / `.deflate` files are read whole. The data source's options can be given
 * in the job configuration with the prefix `tfrecord.`, for example `tfrecord.verifyChecksums`.
 *
 * {{{
 *   sc.newAPIHadoopFile(path, classOf[TFRecordInputFormat], classOf[BytesWritable],
 *     classOf[NullWritable])
 * }}}
 * The key's buffer is reused from record to record: copy it (`copyBytes`) to keep it.
 *
 * The files under an input directory's subdirectories are read too, as the data source reads a
 * folder written with `partitionBy` (`lang=en/part-...`), unless the job sets
 * `mapreduce.input.fileinputformat.input.dir.recursive` itself, or
 * `mapreduce.input.fileinputformat.input.dir.nonrecursive.ignore.subdirs=true`. Names that start
 * with `_` or `.` (`_SUCCESS`, `_temporary`, checksum and index files) are skipped at every level.
 */
class TFRecordInputFormat extends FileInputFormat[BytesWritable, NullWritable] {

  // Hadoop's default, not recursive, hands each subdirectory to getSplits as if it were a file,
  // which fails there with a NullPointerException ("No block locations").
  override protected def listStatus(job: JobContext): JList[FileStatus] = {
    val conf = job.getConfiguration
    if (conf.get(FileInputFormat.INPUT_DIR_RECURSIVE) != null ||
        conf.getBoolean(TFRecordInputFormat.IgnoreSubdirs, false)) {
      super.listStatus(job)
    } else {
      val recursive = new JobConf(conf) // shares the job's credentials, for delegation tokens
      recursive.setBoolean(FileInputFormat.INPUT_DIR_RECURSIVE, true)
      super.listStatus(new JobContextImpl(recursive, job.getJobID))
    }
  }

  override protected def isSplitable(context: JobContext, file: Path): Boolean = {
    val conf = context.getConfiguration
    TFRecordRecordReader.jobOptions(conf).isSplittable(file, conf)
  }

  override def createRecordReader(
      split: InputSplit,
      context: TaskAttemptContext): RecordReader[BytesWritable, NullWritable] =
    new TFRecordRecordReader
}

private object TFRecordInputFormat {

  // FileInputFormat.INPUT_DIR_NONRECURSIVE_IGNORE_SUBDIRS, a field older Hadoop releases lack.
  private val IgnoreSubdirs =
    "mapreduce.input.fileinputformat.input.dir.nonrecursive.ignore.subdirs"
}
