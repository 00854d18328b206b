package io.github.sparktfrecord

import io.github.sparktfrecord.codec.FeaturePaths
import io.github.sparktfrecord.sql.{StatisticsAggregator, StatisticsBuilder, StatisticsProto}

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions.expr
import org.apache.spark.sql.types._

/**
 * TFDV's statistics of a DataFrame, in one Spark job, aggregated in the JVM: [[statistics]], the
 * `DatasetFeatureStatisticsList` TFDV's `generate_statistics_from_tfrecord` computes with its
 * default options for the records the jar writes from the DataFrame; and [[figures]], the engine
 * behind the Python side's `spark_tfrecord.statistics(df, engine="jar")`, which builds the same
 * message from them.
 *
 * {{{
 *   val stats: Array[Byte] = io.github.sparktfrecord.TFRecordStatistics.statistics(df)
 *   java.nio.file.Files.write(java.nio.file.Paths.get("FeatureStats.pb"), stats)
 * }}}
 */
object TFRecordStatistics {

  /**
   * The binary `DatasetFeatureStatisticsList` of the Examples the jar writes from `df`, one
   * dataset named `name`: counts, min, max, mean, standard deviation, unique counts and top values
   * exact; quantiles (median, histograms) within (2 + L + D) / 4096 of the ranks, for 2^D tasks
   * of 2^L chunks of 65,536 numbers. Every column is a feature of its name: numbers, booleans,
   * decimals, dates, timestamps, strings or binary, or arrays of them.
   */
  def statistics(df: DataFrame, name: String = ""): Array[Byte] = {
    val read = df.schema.fields.toSeq.map(readOf(df, _))
    val rounded = read.map(_._3).mkString
    val figures = this.figures(df.select(read.map(_._2): _*), rounded, Top)
    val columns = df.schema.fields.toSeq.zip(read).map { case (f, r) =>
      StatisticsBuilder.Column(f.name, r._1)
    }
    StatisticsProto.encode(Seq(StatisticsBuilder.dataset(figures, columns, name)))
  }

  /** The string values each column's figures keep: TFDV's top values and its rank buckets. */
  private val Top = math.max(StatisticsBuilder.TopValues, StatisticsBuilder.RankBuckets)

  /**
   * A column's TFDV type, what the figures read of it, and 'f' where its doubles are rounded to
   * float32 (as the jar writes them; else '-'): numbers, strings and binary as they are, others
   * as doubles (booleans as 0 and 1, decimals rounded to float32, dates as days and timestamps
   * as microseconds since 1970).
   */
  private def readOf(df: DataFrame, field: StructField): (Int, Column, Char) = {
    val x = "`" + field.name.replace("`", "``") + "`"
    val (list, element) = field.dataType match {
      case ArrayType(e, _) => (true, e)
      case other => (false, other)
    }
    if (FeaturePaths.isEncodedTensor(field)) throw new IllegalArgumentException(
      s"statistics: column '${field.name}' holds an encoded tensor (its bytes and shape), which " +
        "the statistics do not take. Select it out.")
    def as(kind: Int, value: String, values: String) =
      (kind, expr(if (list) values.replace("{x}", x) else value.replace("{x}", x)).as(field.name),
        '-')
    element match {
      case ByteType | ShortType | IntegerType | LongType =>
        (StatisticsProto.IntType, df.col(x), '-')
      case FloatType => (StatisticsProto.FloatType, df.col(x), '-')
      case DoubleType => (StatisticsProto.FloatType, df.col(x), 'f')
      case StringType | BinaryType => (StatisticsProto.StringType, df.col(x), '-')
      case BooleanType => as(StatisticsProto.IntType, "CAST(CAST({x} AS INT) AS DOUBLE)",
          "CAST(CAST({x} AS array<int>) AS array<double>)")
      case _: DecimalType => as(StatisticsProto.FloatType, "CAST(CAST({x} AS FLOAT) AS DOUBLE)",
          "CAST(CAST({x} AS array<float>) AS array<double>)")
      case DateType => as(StatisticsProto.IntType, "CAST(unix_date({x}) AS DOUBLE)",
          "transform({x}, v -> CAST(unix_date(v) AS DOUBLE))")
      case TimestampType => as(StatisticsProto.IntType, "CAST(unix_micros({x}) AS DOUBLE)",
          "transform({x}, v -> CAST(unix_micros(v) AS DOUBLE))")
      case _ => throw new IllegalArgumentException(
          s"statistics: column '${field.name}' has type ${field.dataType.simpleString}; the " +
            "statistics take the features the jar writes in an Example from flat columns " +
            "(numbers, booleans, dates, timestamps, strings, binary, and arrays of them). " +
            "Select the others out.")
    }
  }

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
