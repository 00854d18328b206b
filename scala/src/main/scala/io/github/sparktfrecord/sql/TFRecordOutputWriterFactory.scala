package io.github.sparktfrecord.sql

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.TaskAttemptContext

import org.apache.spark.sql.execution.datasources.{OutputWriter, OutputWriterFactory}
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.codec.RecordSerializer.ValueCounts
import io.github.sparktfrecord.framing.TFRecordWriter

/**
 * Made on the driver by `prepareWrite`, shipped to the tasks, one writer per output file. A
 * write whose files are counted at job commit ([[CountedWrite]]) serializes with its schema.
 */
private[sparktfrecord] final class TFRecordOutputWriterFactory(
    options: TFRecordOptions,
    counted: Option[CountedWrite] = None)
  extends OutputWriterFactory {

  override def getFileExtension(context: TaskAttemptContext): String =
    TFRecordWriter.Extension + options.compression.extension

  override def newInstance(
      path: String,
      dataSchema: StructType,
      context: TaskAttemptContext): OutputWriter =
    new TFRecordOutputWriter(path, counted.map(_.schema).getOrElse(dataSchema), options, context,
      counted)
}

/**
 * A write whose files are counted at job commit, for the folder's manifest, and for a TFDS split
 * or a `shardPrefix` write also named then (prepared by the tfds layer): what each of its files
 * is written with, and what is left beside a file when it closes.
 */
private[sparktfrecord] trait CountedWrite extends Serializable {

  /** The schema to serialize with: the data's columns, with their TFDS features' metadata. */
  def schema: StructType

  /** Whether every feature must hold a value (TFDS decodes no missing feature). */
  def requireValues: Boolean

  /**
   * Called once a file of `records` records is closed, before the task commits, with the numbers
   * of values its features held.
   */
  def fileClosed(path: Path, records: Long, counts: ValueCounts, conf: Configuration): Unit
}
