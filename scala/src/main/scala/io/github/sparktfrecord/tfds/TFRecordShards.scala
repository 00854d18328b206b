package io.github.sparktfrecord.tfds

import java.util.Locale

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col, count, element_at, lit, max}
import org.apache.spark.sql.functions.{monotonically_increasing_id, pmod, row_number}
import org.apache.spark.sql.functions.{shiftright, typedLit, xxhash64}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}
import org.apache.spark.unsafe.hash.Murmur3_x86_32

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * Balanced, shuffled shards: a DataFrame arranged so that partition `s` holds shard `s`, the
 * Scala twin of the Python package's `_shards.arrange` (the same steps, the same bytes for the
 * same seed and rows; docs/tfds.md, "Balanced, shuffled shards"). A `FileFormat` writes what
 * each task is given and cannot move rows between tasks, so the rows are arranged before the
 * write: by [[TFDS.write]], or by [[TFRecordShardsRule]] for a write with the `numShards`
 * option.
 *
 *  1. Every row gets a dense number `index` in `0 .. T-1`: with a seed, in the order of
 *     `key = xxhash64(seed, every column)` (counted per bucket of keys, the key's top 12 bits,
 *     in a first small job; numbered within the bucket by `row_number` ordered by the key and a
 *     second hash that breaks ties), which depends only on the seed and the rows; without one,
 *     in the input's order (`monotonically_increasing_id`'s partition and position, the rows of
 *     each input partition counted in a first job).
 *  1. `shard = index % N`, and `repartition(N, route)` with `route` an integer that Spark's hash
 *     partitioning (`pmod(hash(route), N)`) sends to partition `shard`.
 *  1. `sortWithinPartitions(index)`: each file's records in a fixed order.
 */
object TFRecordShards {

  /** Keys are counted in 2^12 buckets (their top 12 bits). */
  final val BucketBits = 12

  /** `monotonically_increasing_id`: the partition in the upper 31 bits, the position below. */
  final val IdPositionBits = 33

  /** Spark's `hash()` and hash partitioning: Murmur3 x86 32-bit, seed 42. */
  final val SparkHashSeed = 42

  /** The most shards a write takes (the `numShards` option's bound). */
  final val MaxShards = 99999

  /**
   * The name of the column the arrangement repartitions by (behind as many `_` as it takes to
   * be free), which [[TFRecordShardsRule]] recognises.
   */
  final val RouteColumn = "_tfrecord_route"

  /**
   * `df` in `numShards` partitions whose sizes differ by at most one, partition `s` being shard
   * `s`, each sorted; shuffled by `shuffleSeed` when given. Runs one small job now (the counts);
   * the rest runs with the write. A DataFrame with a map column is returned as it is: Spark's
   * hashes refuse maps, and the write refuses them with its own message.
   */
  def arrange(df: DataFrame, numShards: Int, shuffleSeed: Option[Long]): DataFrame = {
    if (numShards < 1 || numShards > MaxShards) {
      throw TFRecordError.invalidOption(TFRecordOptions.NumShardsOption, numShards.toString,
        Seq(s"an integer from 1 to $MaxShards"))
    }
    if (hasMap(df.schema)) return df
    val names = df.schema.fieldNames.toSeq
    val data = names.map(n => df.col("`" + n.replace("`", "``") + "`"))
    val indexName = freeName(names, "_tfrecord_index")
    val routeName = freeName(names, RouteColumn)

    val numbered = shuffleSeed match {
      case Some(s) =>
        val seed = lit(s).cast("long")
        val key = xxhash64(seed +: data: _*)
        // Two different rows with the same key would be numbered in an order that depends on
        // the input; a second 64-bit hash makes that a 2^-128 event. Rows equal in every
        // column are the same record, so their order does not matter.
        val tie = xxhash64(seed +: lit("tie") +: data: _*)
        val bucket = shiftright(key, 64 - BucketBits) + (1 << (BucketBits - 1)) // key order
        val Seq(keyName, tieName, bucketName) = Seq("_k", "_t", "_b").map(freeName(names, _))
        val counts = new Array[Long](1 << BucketBits)
        df.select(bucket.alias(bucketName)).groupBy(bucketName).count().collect()
          .foreach(row => counts(row.getLong(0).toInt) = row.getLong(1))
        val keyed = df.select(
          data :+ key.alias(keyName) :+ tie.alias(tieName) :+ bucket.alias(bucketName): _*)
        val rank = row_number().over(Window.partitionBy(bucketName).orderBy(keyName, tieName))
        val offset = element_at(longs(runningSums(counts)), (col(bucketName) + 1).cast("int"))
        keyed.withColumn(indexName, offset + rank - 1).drop(keyName, tieName, bucketName)
      case None =>
        val idName = freeName(names, "_tfrecord_id")
        val withId = df.select(data :+ monotonically_increasing_id().alias(idName): _*)
        val partition = shiftright(col(idName), IdPositionBits)
        val position = col(idName).bitwiseAND((1L << IdPositionBits) - 1)
        // The hash keeps every column in the counting job's plan: one that read no column could
        // be planned otherwise (a smaller join side broadcast, a smaller shuffle coalesced by
        // AQE) and give partitions that are not the write's.
        val perPartition = withId.groupBy(partition.alias("p"))
          .agg(count(lit(1)).alias("n"), max(xxhash64(data: _*)).alias("h")).collect()
          .map(row => row.getLong(0).toInt -> row.getLong(1)).toMap
        val span = if (perPartition.isEmpty) 0 else perPartition.keys.max + 1
        val counts = Array.tabulate(span)(p => perPartition.getOrElse(p, 0L))
        val offsets = if (span == 0) Array(0L) else runningSums(counts)
        withId.withColumn(indexName,
          element_at(longs(offsets), (partition + 1).cast("int")) + position).drop(idName)
    }

    val routes = longs(routingKeys(numShards).map(_.toLong))
    val shard = pmod(col(indexName), lit(numShards)).cast("int")
    numbered.withColumn(routeName, element_at(routes, shard + 1).cast("int"))
      .repartition(numShards, col(routeName))
      .sortWithinPartitions(indexName)
      .drop(indexName, routeName)
  }

  /**
   * For each shard `s`, the smallest integer `k >= 0` that Spark's hash partitioning into
   * `numShards` partitions sends to partition `s` (`pmod(hash(k), numShards) == s`).
   */
  def routingKeys(numShards: Int): Array[Int] = {
    val keys = Array.fill(numShards)(-1)
    var missing = numShards
    var k = 0
    while (missing > 0) {
      val s = Math.floorMod(Murmur3_x86_32.hashInt(k, SparkHashSeed), numShards)
      if (keys(s) < 0) {
        keys(s) = k
        missing -= 1
      }
      k += 1
    }
    keys
  }

  /**
   * The name of the option [[TFRecordShardsRule]] adds to the write it arranged: a key that
   * starts with `__`, as Spark's own, so that no warning names it.
   */
  final val ArrangedOption = "__tfrecordShardsArranged"

  /**
   * Refuses, when the write is planned, a `shuffleSeed` the write would otherwise ignore: with
   * `partitionBy`, or without the rule that arranges the rows (the session extensions).
   */
  def checkWrite(options: Map[String, String], parsed: TFRecordOptions): Unit =
    if (parsed.shuffleSeed.isDefined) {
      val partitioned = options.exists { case (k, v) =>
        k.equalsIgnoreCase(DataSourceUtils.PARTITIONING_COLUMNS_KEY) &&
          DataSourceUtils.decodePartitioningColumns(v).nonEmpty
      }
      if (partitioned) {
        throw TFRecordError.argument(TFRecordError.InvalidOption,
          s"A write with '${TFRecordOptions.ShuffleSeedOption}' cannot be partitioned " +
            "(partitionBy): it orders the rows of numShards files of one folder.")
      }
      if (!options.keys.exists(_.equalsIgnoreCase(ArrangedOption))) {
        throw TFRecordError.argument(TFRecordError.InvalidOption,
          s"The option '${TFRecordOptions.ShuffleSeedOption}' needs the session extensions, " +
            "which arrange the rows before the write: start the session with " +
            "spark.sql.extensions=io.github.sparktfrecord.TFRecordExtensions (the Python " +
            "package's configure() sets it), or arrange the DataFrame first with " +
            "spark_tfrecord.write(df, path, num_shards=, shuffle_seed=) in Python or " +
            "io.github.sparktfrecord.tfds.TFRecordShards.arrange in Scala.")
      }
    }

  private def hasMap(dataType: DataType): Boolean = dataType match {
    case _: MapType => true
    case a: ArrayType => hasMap(a.elementType)
    case s: StructType => s.fields.exists(f => hasMap(f.dataType))
    case _ => false
  }

  private def freeName(taken: Seq[String], name: String): String = {
    val lower = taken.map(_.toLowerCase(Locale.ROOT)).toSet
    var free = name
    while (lower.contains(free.toLowerCase(Locale.ROOT))) free = "_" + free
    free
  }

  /** A literal `array<bigint>`. */
  private def longs(values: Array[Long]): Column = typedLit(values.toSeq)

  private def runningSums(counts: Array[Long]): Array[Long] = counts.scanLeft(0L)(_ + _).init
}
