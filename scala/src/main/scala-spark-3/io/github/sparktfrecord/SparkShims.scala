package io.github.sparktfrecord

import scala.annotation.nowarn

import org.apache.hadoop.conf.Configuration

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Dataset, Encoders, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** What differs between Spark 3.5 and Spark 4.x, for the Spark 3.5 jars. */
private[sparktfrecord] object SparkShims {

  /**
   * Scala's Java collection converters (`import SparkShims.Converters._`, then `asScala`):
   * `scala.collection.JavaConverters`, the one both Scala 2.12 and 2.13 have (2.13 deprecates it
   * for `scala.jdk.CollectionConverters`, which 2.12 does not have).
   */
  @nowarn("cat=deprecation")
  val Converters: scala.collection.JavaConverters.type = scala.collection.JavaConverters

  /** The Hadoop configuration of a session with the data source's options applied. */
  def hadoopConf(session: SparkSession, options: Map[String, String]): Configuration =
    session.sessionState.newHadoopConfWithOptions(options)

  /** Spark's estimate of `df`'s size (its optimized plan's statistics), and the cores. */
  def sizeAndParallelism(df: DataFrame): Option[(BigInt, Int)] =
    Some((df.queryExecution.optimizedPlan.stats.sizeInBytes,
      df.sparkSession.sparkContext.defaultParallelism))

  /** A DataFrame of an (analyzed) plan, as Spark's private `Dataset.ofRows` makes it. */
  def ofRows(session: SparkSession, plan: LogicalPlan): DataFrame =
    new Dataset[Row](session, plan, Encoders.row(plan.schema))

  /** The rows of `df`'s plan, as Spark's operators hand them on. */
  def internalRows(df: DataFrame): RDD[InternalRow] = df.queryExecution.toRdd
}
