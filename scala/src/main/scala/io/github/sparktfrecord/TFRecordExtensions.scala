package io.github.sparktfrecord

import org.apache.spark.sql.SparkSessionExtensions

import io.github.sparktfrecord.sql.TFRecordSchemaPruning
import io.github.sparktfrecord.tfds.TFRecordShardsRule

/**
 * The session extensions of the `tfrecord` data source: nested column pruning
 * ([[TFRecordSchemaPruning]]) and balanced, shuffled shards for writes with `numShards`
 * ([[TFRecordShardsRule]]). Enabled with
 * `spark.sql.extensions=io.github.sparktfrecord.TFRecordExtensions`, which the Python package's
 * `configure()` sets; without it, queries of struct fields return the same rows, decoding all
 * the features of the struct, `numShards` only counts the files, and `shuffleSeed` is refused.
 */
class TFRecordExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectOptimizerRule(_ => TFRecordSchemaPruning)
    extensions.injectOptimizerRule(TFRecordShardsRule)
  }
}
