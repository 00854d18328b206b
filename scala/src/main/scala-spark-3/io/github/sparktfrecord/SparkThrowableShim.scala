package io.github.sparktfrecord

import org.apache.spark.SparkThrowable

/** Spark 3.5's `SparkThrowable` names the error condition `getErrorClass`. */
private[sparktfrecord] trait SparkThrowableShim extends SparkThrowable {
  def condition: String
  override def getErrorClass: String = condition
}
