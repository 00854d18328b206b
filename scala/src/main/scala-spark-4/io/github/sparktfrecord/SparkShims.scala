package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic

/** What differs between Spark 3.5 and Spark 4.x, for the Spark 4 jar. */
private[sparktfrecord] object SparkShims {

  /** Scala's Java collection converters (`import SparkShims.Converters._`, then `asScala`). */
  val Converters: scala.jdk.CollectionConverters.type = scala.jdk.CollectionConverters

  /**
   * The Hadoop configuration of a session with the data source's options applied. File formats
   * only ever run in a classic (non-Connect) session, which alone has a session state.
   */
  def hadoopConf(session: SparkSession, options: Map[String, String]): Configuration =
    session.asInstanceOf[classic.SparkSession].sessionState.newHadoopConfWithOptions(options)

  /** Spark's estimate of `df`'s size (its optimized plan's statistics), and the cores. */
  def sizeAndParallelism(df: DataFrame): Option[(BigInt, Int)] = df match {
    case d: classic.Dataset[_] => Some((d.queryExecution.optimizedPlan.stats.sizeInBytes,
        d.sparkSession.sparkContext.defaultParallelism))
    case _ => None
  }

  /**
   * A DataFrame of an (analyzed) plan, as Spark's private `Dataset.ofRows` makes it. Only in a
   * classic session: a plan is planned there.
   */
  def ofRows(session: SparkSession, plan: LogicalPlan): DataFrame =
    new classic.Dataset[Row](session.asInstanceOf[classic.SparkSession], plan,
      Encoders.row(plan.schema))

  /** The rows of `df`'s plan, as Spark's operators hand them on (a classic session's only). */
  def internalRows(df: DataFrame): RDD[InternalRow] =
    df.asInstanceOf[classic.Dataset[_]].queryExecution.toRdd
}
