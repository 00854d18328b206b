package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration

import org.apache.spark.sql.{DataFrame, SparkSession}

/** What differs between Spark 3.5 and Spark 4.x, for the Spark 3.5 jars. */
private[sparktfrecord] object SparkShims {
  /** The Hadoop configuration of a session with the data source's options applied. */
  def hadoopConf(session: SparkSession, options: Map[String, String]): Configuration =
    session.sessionState.newHadoopConfWithOptions(options)

  /** Spark's estimate of `df`'s size (its optimized plan's statistics), and the cores. */
  def sizeAndParallelism(df: DataFrame): Option[(BigInt, Int)] =
    Some((df.queryExecution.optimizedPlan.stats.sizeInBytes,
      df.sparkSession.sparkContext.defaultParallelism))
}
