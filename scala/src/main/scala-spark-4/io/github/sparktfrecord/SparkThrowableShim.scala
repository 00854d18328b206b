package io.github.sparktfrecord

import org.apache.spark.SparkThrowable

/** Spark 4's `SparkThrowable` names the condition `getCondition` (`getErrorClass` calls it). */
private[sparktfrecord] trait SparkThrowableShim extends SparkThrowable {
  def condition: String
  override def getCondition: String = condition
}
