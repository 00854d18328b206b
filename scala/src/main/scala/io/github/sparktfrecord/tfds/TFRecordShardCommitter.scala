package io.github.sparktfrecord.tfds

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter

/**
 * The job committer of a sharded write ([[TFRecordShardedWrite]]), installed by `prepareWrite`
 * through Spark's `spark.sql.sources.outputCommitterClass`, as Parquet installs its own: Hadoop's
 * file committer, which then names the shards and writes the dataset's metadata.
 */
private[sparktfrecord] class TFRecordShardCommitter(output: Path, context: TaskAttemptContext)
  extends FileOutputCommitter(output, context) {

  override def setupJob(jobContext: JobContext): Unit = {
    TFRecordShardedWrite.checkPrefixFree(jobContext.getConfiguration)
    super.setupJob(jobContext)
  }

  override def commitJob(jobContext: JobContext): Unit = {
    super.commitJob(jobContext)
    TFRecordShardedWrite.finish(jobContext.getConfiguration)
  }
}
