package io.github.sparktfrecord

import org.apache.spark.sql.{DataFrame, SparkSession}

import io.github.sparktfrecord.json.Json
import io.github.sparktfrecord.sql.TFRecordOptions
import io.github.sparktfrecord.tfds.TFRecordShards

/**
 * TensorFlow Datasets folders from Scala (`spark-shell`), the same calls as Python's
 * `spark_tfrecord.write_tfds` and `read_tfds`:
 * {{{
 *   val folder = io.github.sparktfrecord.TFDS.write(df, "/data/tfds", "my_dataset", "train")
 *   // tfds.builder_from_directory(folder), or tfds.load("my_dataset", data_dir="/data/tfds")
 *   val train = io.github.sparktfrecord.TFDS.read(spark, folder, "train")
 * }}}
 * Both only set options of the `tfrecord` format ([[TFRecordOptions]]), which does the work.
 */
object TFDS {
  /** A shard is at least this large when Spark can estimate the data's size. */
  final val MinShardBytes: Long = 64L << 20

  /**
   * Writes `df` as split `split` of the TFDS dataset `name` into `dataDir/name/version/`, and
   * returns that folder.
   *
   * @param numShards the number of shard files, whose record counts differ by at most one (the
   *   rows are arranged by [[tfds.TFRecordShards.arrange]]); 0: one per partition, fewer as
   *   [[mergedShards]] says
   * @param features the dataset's features as TFDS's JSON (`features.json`); null: those
   *   already in the folder, else the ones derived from the schema
   * @param mode `error` (a split that exists is refused) or `overwrite` (it is replaced)
   * @param classNames the class names of ClassLabel features, by feature path
   * @param shuffleSeed with `numShards`, the rows dealt to the shards in an order that depends
   *   only on the seed and the rows (the same shards for the same seed and rows)
   */
  def write(
      df: DataFrame,
      dataDir: String,
      name: String,
      split: String,
      version: String = "1.0.0",
      numShards: Int = 0,
      features: String = null,
      mode: String = "error",
      classNames: Map[String, Seq[String]] = Map.empty,
      shuffleSeed: Option[Long] = None): String = {
    val folder = s"${dataDir.stripSuffix("/")}/$name/$version"
    if (shuffleSeed.isDefined && numShards <= 0) {
      throw TFRecordError.argument(TFRecordError.InvalidOption,
        "shuffleSeed orders the rows of numShards shards: give numShards too")
    }
    val data = if (numShards > 0) TFRecordShards.arrange(df, numShards, shuffleSeed)
    else {
      val merged = mergedShards(df)
      if (merged > 0) df.coalesce(merged) // never more partitions than there are
      else df
    }
    var writer = data.write.format("tfrecord").mode("append")
      .option(TFRecordOptions.TfdsOption, name)
      .option(TFRecordOptions.SplitOption, split)
      .option(TFRecordOptions.TfdsVersionOption, version)
      .option(TFRecordOptions.TfdsModeOption, mode)
    if (numShards > 0) writer = writer.option(TFRecordOptions.NumShardsOption, numShards)
    if (features != null) writer = writer.option(TFRecordOptions.TfdsFeaturesOption, features)
    if (classNames.nonEmpty) {
      val json = Json.Obj(classNames.toVector.map { case (path, names) =>
        path -> Json.arr(names.map(Json.str))
      }).compact
      writer = writer.option(TFRecordOptions.TfdsClassNamesOption, json)
    }
    writer.save(folder)
    folder
  }

  /**
   * How many shards a write without `numShards` merges the DataFrame's partitions into (with
   * `coalesce`, no shuffle; a DataFrame with fewer partitions keeps them): as many as give
   * shards of [[MinShardBytes]] by Spark's size estimate of the data (its plan statistics,
   * which no job computes), but not fewer than Spark's default parallelism (the cores), so that
   * the write keeps them all busy. 0 when Spark has no estimate: one shard per partition.
   */
  def mergedShards(df: DataFrame): Int =
    SparkShims.sizeAndParallelism(df) match {
      case Some((bytes, cores)) if bytes < BigInt(Long.MaxValue) =>
        val bySize = (bytes + MinShardBytes - 1) / MinShardBytes
        bySize.max(cores).max(1).min(Int.MaxValue).toInt
      case _ => 0
    }

  /** Split `split` of the TFDS dataset in `folder`, with the schema of its `features.json`. */
  def read(spark: SparkSession, folder: String, split: String): DataFrame =
    spark.read.format("tfrecord").option(TFRecordOptions.SplitOption, split).load(folder)
}
