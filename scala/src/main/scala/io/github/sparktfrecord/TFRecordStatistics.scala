package io.github.sparktfrecord

import io.github.sparktfrecord.sql.StatisticsAggregator

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * The figures of TFDV's statistics of a DataFrame, in one Spark job, aggregated in the JVM: the
 * engine behind `spark_tfrecord.statistics(df, engine="jar")`, which selects the features as
 * numbers, strings or binary, or arrays of them, and builds the `DatasetFeatureStatisticsList`
 * from these.
 */
object TFRecordStatistics {

  /**
   * `df`'s figures (the layout of [[StatisticsAggregator.figures]]), with the `top` most frequent
   * values of each string column; `rounded` has an 'f' at each double column to round to float32.
   * Only in a classic session: the job runs on its plan's rows.
   */
  def figures(df: DataFrame, rounded: String, top: Int): Array[Byte] = {
    val rows = inFinerSplits(df.sparkSession)(SparkShims.internalRows(df))
    StatisticsAggregator.figures(rows, df.schema, rounded, top)
  }

  /** The read tasks per core the statistics' job splits files into, unless the session says. */
  private final val SplitsPerCore = 4

  /**
   * `plan` (the job's rows planned) with the files split into [[SplitsPerCore]] tasks per core
   * (`spark.sql.files.minPartitionNum`, read as the scan is planned), where the session sets no
   * number. Spark's default, one per core, packs whole files: 8 files of 40 MB on 2 cores are 3
   * tasks of 3, 3 and 2 files, the last task alone for a third of the job; 8 tasks fill the
   * cores to the end, and the driver merges the strings of the earlier ones while later ones run.
   */
  private def inFinerSplits[T](session: SparkSession)(plan: => T): T = {
    val key = "spark.sql.files.minPartitionNum"
    if (session.conf.getOption(key).isDefined) plan
    else {
      session.conf.set(key, SplitsPerCore.toLong * session.sparkContext.defaultParallelism)
      try plan
      finally session.conf.unset(key)
    }
  }

  /**
   * [[figures]] in base64, for Python: Py4J hands a `byte[]` over one byte at a time in Python
   * (4.1 s of a 12.5 s run for 3.7 MB of figures), a string whole.
   */
  def figuresBase64(df: DataFrame, rounded: String, top: Int): String =
    java.util.Base64.getEncoder.encodeToString(figures(df, rounded, top))
}
