package io.github.sparktfrecord

import org.apache.spark.sql.SparkSessionExtensions

import io.github.sparktfrecord.sql.TFRecordSchemaPruning

/**
 * The session extensions of the `tfrecord` data source: nested column pruning
 * ([[TFRecordSchemaPruning]]). Enabled with
 * `spark.sql.extensions=io.github.sparktfrecord.TFRecordExtensions`, which the Python package's
 * `configure()` sets; without it, queries of struct fields return the same rows, decoding all
 * the features of the struct.
 */
class TFRecordExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit =
    extensions.injectOptimizerRule(_ => TFRecordSchemaPruning)
}
