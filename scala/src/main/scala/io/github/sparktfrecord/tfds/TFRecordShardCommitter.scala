package io.github.sparktfrecord.tfds

import java.io.IOException

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter

import io.github.sparktfrecord.framing.HadoopCompat

/**
 * The job committer of every `tfrecord` write under Spark's default commit protocol
 * ([[TFRecordShardedWrite]]), installed by `prepareWrite` through Spark's
 * `spark.sql.sources.outputCommitterClass`, as Parquet installs its own: Hadoop's file committer,
 * which then names a sharded write's files, writes a TFDS split's metadata, and merges the files
 * into the folder's manifest ([[TFRecordManifest]]), holding the folder's manifest lock from
 * before the files move in until the manifest is written.
 */
private[sparktfrecord] class TFRecordShardCommitter(output: Path, context: TaskAttemptContext)
  extends FileOutputCommitter(output, context) {

  // The task's writers see this in the configuration they share with it: their files are
  // counted at job commit, so they leave their counts beside them.
  if (context != null) context.getConfiguration.setBoolean(TFRecordShardedWrite.CommitterKey, true)

  override def setupJob(jobContext: JobContext): Unit = {
    TFRecordShardedWrite.checkPrefixFree(jobContext.getConfiguration)
    // What Hadoop's does, without its chmod processes on the local file system.
    val attempt = getJobAttemptPath(jobContext)
    HadoopCompat.mkdirs(attempt.getFileSystem(jobContext.getConfiguration), attempt)
  }

  /**
   * Removes this write's attempt folder only, and `_temporary` once no other write uses it:
   * Hadoop's removes all of `_temporary`, and with it the files of another write committing into
   * the same folder (each write has an attempt folder of its own, see [[TFRecordShardedWrite]]).
   */
  override def cleanupJob(jobContext: JobContext): Unit = {
    // `output`, not getOutputPath, which is private in the Hadoop 2.6 and 3.0 that a build can
    // put ahead of Spark's (tests/test_old_hadoop.py).
    val pending = new Path(output, FileOutputCommitter.PENDING_DIR_NAME)
    val fs = pending.getFileSystem(jobContext.getConfiguration)
    fs.delete(getJobAttemptPath(jobContext), true)
    try {
      if (fs.listStatus(pending).isEmpty) fs.delete(pending, false)
    } catch {
      // Gone, or no longer empty: another write's.
      case _: IOException =>
    }
  }

  override def commitJob(jobContext: JobContext): Unit = {
    val conf = jobContext.getConfiguration
    val lock = TFRecordShardedWrite.lock(conf)
    try {
      // `_SUCCESS` last, after the manifest, and made as our other files are (Hadoop's own
      // create costs two processes on the local file system: see HadoopCompat.createNew).
      val marker = FileOutputCommitter.SUCCESSFUL_JOB_OUTPUT_DIR_MARKER
      val mark = conf.getBoolean(marker, true)
      conf.setBoolean(marker, false)
      try super.commitJob(jobContext)
      finally conf.setBoolean(marker, mark)
      TFRecordShardedWrite.finish(conf, output)
      if (mark) {
        val success = new Path(output, FileOutputCommitter.SUCCEEDED_FILE_NAME)
        val fs = success.getFileSystem(conf)
        fs.delete(success, false)
        HadoopCompat.createNew(fs, success).close()
      }
    } finally lock.foreach(_.release())
  }
}
