package io.github.sparktfrecord

import java.io.File
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.framing.{TFRecordCompression, TFRecordWriter}

/**
 * The base of the integration suites: one local `SparkSession` for the whole suite (two cores,
 * no UI, two shuffle partitions, the data source's session extensions), stopped after its last
 * test, as Spark's `SharedSparkSession` does for `AvroSuite` and `ParquetIOSuite`. Each test
 * writes under a temporary folder of its own, removed when it ends.
 */
abstract class LocalSparkSuite extends UnitSuite {
  private var session: SparkSession = _

  /** The suite's session, started before its first test. */
  protected def spark: SparkSession = session

  /** Whether the suite's session installs [[TFRecordExtensions]] (a suite may go without). */
  protected def withExtensions: Boolean = true

  override def beforeAll(): Unit = {
    super.beforeAll()
    val builder = SparkSession.builder()
      .master("local[2]")
      .appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.session.timeZone", "UTC")
    if (withExtensions) builder.config("spark.sql.extensions", classOf[TFRecordExtensions].getName)
    session = builder.getOrCreate()
  }

  override def afterAll(): Unit =
    try {
      if (session != null) session.stop()
      // The next suite in this JVM starts a session of its own, with its own settings.
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    } finally super.afterAll()

  /** Runs `body` with a new, empty temporary folder, removed afterwards. */
  protected def withTempDir[T](body: File => T): T = {
    val dir = Files.createTempDirectory("sparktfrecord-suite").toFile
    try body(dir)
    finally delete(dir)
  }

  private def delete(file: File): Unit = {
    Option(file.listFiles()).foreach(_.foreach(delete))
    file.delete()
  }

  /** A DataFrame of `rows` with the schema `ddl` (`"id long, s string"`). */
  protected def frame(ddl: String, rows: Row*): DataFrame =
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), StructType.fromDDL(ddl))

  /** Writes `records` (serialized protos, from [[ProtoBytes]]) as one uncompressed file. */
  protected def writeRecords(file: File, records: Array[Byte]*): Unit = {
    val writer = new TFRecordWriter(new Path(file.toURI), new Configuration(),
      TFRecordCompression.None)
    try records.foreach(r => writer.write(r, r.length))
    finally writer.close()
  }

  /**
   * The messages of `e` and its causes, one a line: an error a task raised reaches the
   * driver wrapped in Spark's own ("Encountered error while reading file", "Job aborted").
   */
  protected def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).flatMap(c => Option(c.getMessage))
      .mkString("\n")

  /** The names in `dir` that are not hidden (`.crc`, `_SUCCESS` and the like). */
  protected def visibleFiles(dir: File): Seq[String] =
    Option(dir.list()).toSeq.flatten.filterNot(n => n.startsWith(".") || n.startsWith("_")).sorted
}
