package io.github.sparktfrecord

import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.AtomicWrite
import io.github.sparktfrecord.sql.{StatisticsAggregator, StatisticsBuilder, StatisticsFeatures}
import io.github.sparktfrecord.sql.{StatisticsProto, StatisticsWeighted, TFRecordOptions}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.functions.expr

/**
 * TFDV's statistics of a DataFrame, in one Spark job, aggregated in the JVM: [[statistics]], the
 * `DatasetFeatureStatisticsList` TFDV's `generate_statistics_from_tfrecord` computes with its
 * default options for the records the jar writes from the DataFrame, which the Python side's
 * `spark_tfrecord.statistics(df, engine="jar")` takes whole ([[statisticsBase64]]); and
 * [[figures]], the aggregates under it.
 *
 * {{{
 *   val stats: Array[Byte] = io.github.sparktfrecord.TFRecordStatistics.statistics(df)
 *   java.nio.file.Files.write(java.nio.file.Paths.get("FeatureStats.pb"), stats)
 * }}}
 */
object TFRecordStatistics {

  /**
   * The binary `DatasetFeatureStatisticsList` of the records the jar writes from `df`, one dataset
   * named `name`: counts, min, max, mean, standard deviation, unique counts and top values exact;
   * quantiles (median, histograms) within (2 + L + D) / 4096 of the ranks, for 2^D tasks of 2^L
   * chunks of up to 262,144 numbers (weighted ones exact). Every feature the jar writes is one:
   * numbers, booleans, decimals, dates, timestamps, strings or binary, lists and lists of lists of
   * them, a struct's leaves by their paths. `options` (names in any case):
   *
   *  - `recordType`: `Example` (default) or `SequenceExample`, whose feature lists are features
   *    under `##SEQUENCE##` as TFX computes them;
   *  - `pathSeparator`: what joins a struct leaf's path (default `/`), as the write option;
   *  - `weight`: a numeric feature, one number in every row: TFDV's weighted statistics too (by
   *    Spark SQL, a second job).
   */
  def statistics(df: DataFrame, name: String = "", options: Map[String, String] = Map.empty)
      : Array[Byte] = {
    val set = CaseInsensitiveMap(options)
    set.keys.find(k => !StatisticsOptions.exists(_.equalsIgnoreCase(k))).foreach { k =>
      throw new IllegalArgumentException(s"statistics: no option '$k'; the options are " +
        StatisticsOptions.mkString(", "))
    }
    // recordType and pathSeparator as the data source reads them, its errors theirs
    val parsed = new TFRecordOptions(set.filter { case (k, _) => !k.equalsIgnoreCase("weight") })
    if (parsed.recordType == RecordType.ByteArray) throw TFRecordError.invalidOption(
      "recordType", set("recordType"),
      Seq(RecordType.Example.name, RecordType.SequenceExample.name))
    val selected = StatisticsFeatures.select(df, parsed.recordType, parsed.pathSeparator)
    val fields = selected.df.schema.fields.toSeq
    val columns =
      fields.map(f => StatisticsFeatures.column(f.name, f.dataType, selected.of(f.name)))
    // (a weight the records cannot hold fails here, before any job)
    val weight = set.get("weight").map(w => (w, StatisticsWeighted.weightSql(columns, w)))
    val read = columns.zip(fields).map { case (c, f) => StatisticsFeatures.readAs(c, f.dataType) }
    val picked = read.zip(columns).zipWithIndex.map { case (((sql, _), c), i) =>
      // a column read as it is keeps its name: a select of the scan's own columns copies no row
      if (sql == StatisticsFeatures.quote(c.name)) expr(sql) else expr(sql).as(s"c$i")
    }
    val figures = this.figures(selected.df.select(picked: _*), read.map(_._2).mkString, Top)
    val weighed = weight.map { case (w, sql) =>
      (w, StatisticsWeighted.weighed(selected.df, columns, sql, StatisticsBuilder.Fine, Top))
    }
    StatisticsProto.encode(Seq(
      StatisticsBuilder.dataset(figures, columns, name, selected.lists, weighed)))
  }

  /** [[statistics]] with `options` from Java or Python (Py4J hands a dict over as a Map). */
  def statistics(df: DataFrame, name: String, options: java.util.Map[String, String])
      : Array[Byte] = {
    import SparkShims.Converters._
    statistics(df, name, options.asScala.toMap)
  }

  /**
   * [[statistics]] in base64, for Python's `engine="jar"`: the message built here, where the
   * figures are, and handed over whole (Py4J hands a `byte[]` over a byte at a time, a string
   * whole).
   */
  def statisticsBase64(df: DataFrame, name: String, options: java.util.Map[String, String])
      : String = java.util.Base64.getEncoder.encodeToString(statistics(df, name, options))

  /**
   * [[statistics]] (a dataset named `name`) written to `path`, any file system Hadoop reaches
   * (local, HDFS, S3A, ...): with `tfxSplit`, to `path/Split-<tfxSplit>/FeatureStats.pb`, the
   * ExampleStatistics artifact's layout StatisticsGen writes; without (""), to `path` itself.
   * The file appears whole or not at all. Returns the file written.
   */
  def write(
      df: DataFrame,
      path: String,
      tfxSplit: String = "",
      name: String = "",
      options: Map[String, String] = Map.empty): String = {
    val stats = statistics(df, name, options)
    val file =
      if (tfxSplit.isEmpty) new Path(path) else new Path(path, s"Split-$tfxSplit/FeatureStats.pb")
    val fs = file.getFileSystem(SparkShims.hadoopConf(df.sparkSession, Map.empty))
    AtomicWrite(fs, file)(_.write(stats))
    fs.makeQualified(file).toString
  }

  /** [[write]] with `options` from Java or Python (Py4J hands a dict over as a Map). */
  def write(df: DataFrame, path: String, tfxSplit: String, name: String,
      options: java.util.Map[String, String]): String = {
    import SparkShims.Converters._
    write(df, path, tfxSplit, name, options.asScala.toMap)
  }

  private val StatisticsOptions = Seq("recordType", "pathSeparator", "weight")

  /** The string values each column's figures keep: TFDV's top values and its rank buckets. */
  private val Top = math.max(StatisticsBuilder.TopValues, StatisticsBuilder.RankBuckets)

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
}
