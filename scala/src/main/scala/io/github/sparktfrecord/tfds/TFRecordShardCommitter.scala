package io.github.sparktfrecord.tfds

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter

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
    super.setupJob(jobContext)
  }

  override def commitJob(jobContext: JobContext): Unit = {
    val conf = jobContext.getConfiguration
    val lock = TFRecordShardedWrite.lock(conf)
    try {
      super.commitJob(jobContext)
      TFRecordShardedWrite.finish(conf, getOutputPath)
    } finally lock.foreach(_.release())
  }
}
