package io.github.sparktfrecord.sql

import java.util.Locale

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.codec.{FeaturePaths, RecordType, TypeTable}

/**
 * The warnings a read or a write logs on the driver while its query is planned, once per query
 * (per SQL execution): an option this source does not know, and columns of a given schema that
 * no sampled record holds. Neither is an error: Spark's file sources ignore options they do not
 * know, and TensorFlow reads a feature a record does not hold as its default (here, null). But
 * both are most often a typo, which would otherwise cost a silent misread.
 */
private[sparktfrecord] object TFRecordPlanningWarnings {
  // Named for the data source, which is what users look for in their logs (docs/options.md).
  private val log = LoggerFactory.getLogger("io.github.sparktfrecord.TFRecordFileFormat")

  /** (SQL execution, what) pairs already warned about: the most recent ones only. */
  private val warned = new java.util.LinkedHashMap[String, java.lang.Boolean](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, java.lang.Boolean]): Boolean =
      size > 1024
  }

  /** Logs `message` unless this query (SQL execution) already logged one about `what`. */
  private def once(session: SparkSession, what: String)(message: => String): Unit = {
    // Spark's SQLExecution.EXECUTION_ID_KEY: set while a query runs, including its planning.
    val execution = session.sparkContext.getLocalProperty("spark.sql.execution.id")
    val first = execution == null ||
      warned.synchronized(warned.put(execution + "\u0000" + what, java.lang.Boolean.TRUE) == null)
    if (first) log.warn(message)
  }

  /**
   * Option names Spark passes to, or reads for, every file source (lower case): `path` and the
   * partitioning keys the writer adds (`DataSourceUtils`), `FileSourceOptions`,
   * `FileIndexOptions`, `FileFormat.OPTION_RETURNING_BATCH`, the writer's `maxRecordsPerFile`
   * and `partitionOverwriteMode`, `FileStreamOptions` and the streaming sink's; and the
   * connector's `writeLocality`, which docs/migration.md says is accepted and ignored. Keys with a
   * dot are Hadoop settings, which Spark copies into the job's configuration; keys that start
   * with `__` are Spark's own.
   */
  val SparkOptions: Set[String] = Set("path", "paths", "basePath", "mergeSchema",
    "pathGlobFilter", "recursiveFileLookup", "modifiedBefore", "modifiedAfter",
    "ignoreCorruptFiles", "ignoreMissingFiles", "timeZone", "maxRecordsPerFile",
    "partitionOverwriteMode", "returning_batch", "maxFilesPerTrigger", "maxBytesPerTrigger",
    "maxFileAge", "latestFirst", "fileNameOnly", "maxCachedFiles", "discardCachedInputRatio",
    "cleanSource", "sourceArchiveDir", "checkpointLocation", "queryName", "retention",
    "writeLocality").map(_.toLowerCase(Locale.ROOT))

  /** The options people write next to ours, suggested when close to a misspelt key. */
  private val SparkOptionNames = Seq("pathGlobFilter", "recursiveFileLookup", "modifiedBefore",
    "modifiedAfter", "basePath", "maxRecordsPerFile")

  /** Whether an option key is ours or one that Spark passes or reads (see [[SparkOptions]]). */
  def isKnown(key: String): Boolean = {
    val lower = key.toLowerCase(Locale.ROOT)
    TFRecordOptions.Names.exists(_.equalsIgnoreCase(key)) || SparkOptions.contains(lower) ||
      lower.contains('.') || lower.startsWith("__")
  }

  /** Warns once per unknown key of `options`, naming the closest valid option. */
  def unknownOptions(session: SparkSession, options: Map[String, String]): Unit = {
    // As the user spelt them: a read's options come in a map of lower-cased keys.
    val spelt = options match {
      case c: CaseInsensitiveMap[String @unchecked] => c.originalMap
      case other => other
    }
    spelt.keys.filterNot(isKnown).toSeq.sorted.foreach { key =>
      once(session, "option " + key.toLowerCase(Locale.ROOT))(unknownOptionMessage(key))
    }
  }

  def unknownOptionMessage(key: String): String = {
    val hint = closest(key, TFRecordOptions.Names ++ SparkOptionNames)
      .map(c => s"; did you mean '$c'?").getOrElse(".")
    s"Unknown tfrecord option '$key' (ignored)$hint Valid options: " +
      s"${TFRecordOptions.Names.mkString(", ")}, and Spark's file-source options " +
      s"(${SparkOptionNames.mkString(", ")}, ...). See docs/options.md."
  }

  /** The candidate closest to `key` (case-insensitive edit distance), when close enough. */
  def closest(key: String, candidates: Seq[String]): Option[String] = {
    val k = key.toLowerCase(Locale.ROOT)
    val (best, distance) = candidates.map(c => c -> editDistance(k, c.toLowerCase(Locale.ROOT)))
      .minBy(_._2)
    if (distance <= 2 || distance * 3 <= k.length) Some(best) else None
  }

  /** Levenshtein distance: insertions, deletions and substitutions of one character. */
  private def editDistance(a: String, b: String): Int = {
    var previous = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      val current = new Array[Int](b.length + 1)
      current(0) = i
      for (j <- 1 to b.length) {
        val substitution = previous(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1)
        current(j) = math.min(substitution, math.min(previous(j), current(j - 1)) + 1)
      }
      previous = current
    }
    previous(b.length)
  }

  /**
   * Warns once naming the columns of `required` (the columns a scan reads, partition columns
   * apart) whose features no record of inference's sample holds
   * ([[TFRecordSchemaInferencer.heldFeatures]]): a column inference gave is always held. Most
   * often one record of the first file holds them all, and that is all that is read. Not checked:
   * `ByteArray` records, TFDS splits (the schema is the dataset's), reads of several paths (Spark
   * hands the source no path then) and reads whose files Spark filters (`pathGlobFilter`,
   * `modifiedBefore`, `modifiedAfter`). A failure to list or read is left to the scan to report.
   */
  def absentColumns(
      session: SparkSession,
      required: StructType,
      options: Map[String, String],
      parsed: TFRecordOptions,
      conf: Configuration): Unit = {
    val lower = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    val filtered = Seq("pathglobfilter", "modifiedbefore", "modifiedafter").exists(lower.contains)
    val root = lower.get("path")
    if (parsed.recordType == RecordType.ByteArray || parsed.split.isDefined || filtered ||
        root.isEmpty) return
    val columns = StructType(required.filterNot(_.name == parsed.columnNameOfCorruptRecord))
    if (columns.isEmpty) return
    val leaves = FeaturePaths.leaves(columns, parsed.recordType, parsed.pathSeparator)
    // A vector column is also held by its sparse layout's features (vectorLayout sparse), and a
    // list of lists in an Example only by its ragged layout's.
    def sparseName(l: FeaturePaths.Leaf): Option[String] =
      if (TypeTable.isVector(l.dataType)) Some(l.name + parsed.pathSeparator + "indices")
      else if (FeaturePaths.isRagged(l.dataType, parsed.recordType)) {
        Some(l.name + parsed.pathSeparator + FeaturePaths.RaggedFlatValues)
      } else None
    val wanted = leaves.flatMap(l => l.name +: sparseName(l).toSeq).toSet
    val started = System.nanoTime()
    val held = try {
      val path = new Path(root.get)
      val fs = path.getFileSystem(conf)
      val roots = Option(fs.globStatus(path)).map(_.toSeq).getOrElse(Nil).sortBy(_.getPath.toString)
      firstOf(roots.iterator.flatMap(firstFile(fs, _))) match {
        case None => wanted // no file: nothing to say
        case Some(first) => TFRecordSchemaInferencer.heldFeatures(first,
            roots.flatMap(dataFiles(fs, _)), parsed, conf, wanted)
      }
    } catch {
      case NonFatal(e) =>
        log.debug("Could not check which columns the records hold", e)
        wanted
    }
    if (log.isDebugEnabled) {
      log.debug(s"Checked ${wanted.size} feature(s) against the sampled records in " +
        s"${(System.nanoTime() - started) / 1000000} ms")
    }
    val absent = leaves.filterNot(l => held.contains(l.name) || sparseName(l).exists(held.contains))
    if (absent.nonEmpty) {
      val names = absent.map(l =>
        if (l.column == l.name) s"'${l.name}'"
        else s"'${l.column}' (feature '${l.name}')").mkString(", ")
      once(session, "columns " + absent.map(_.column).mkString(","))(
        s"No sampled TFRecord record holds the feature of column(s) $names: they read as null. " +
          s"Check the names against the files' features (spark-tfrecord inspect ${root.get}); " +
          "the sample is the one schema inference reads (inferSchemaMaxFiles, " +
          "inferSchemaMaxRecords).")
    }
  }

  /** Whether Spark's file listing skips a file or directory of this name. */
  private def skipped(name: String): Boolean =
    (name.startsWith("_") && !name.contains("=")) || name.startsWith(".")

  /** The first data file under `status`, in sorted order, without listing the rest. */
  private def firstFile(fs: FileSystem, status: FileStatus): Option[FileStatus] =
    if (!status.isDirectory) Some(status)
    else {
      firstOf(fs.listStatus(status.getPath).filterNot(s => skipped(s.getPath.getName))
        .sortBy(_.getPath.getName).iterator.flatMap(firstFile(fs, _)))
    }

  private def firstOf[T](it: Iterator[T]): Option[T] = if (it.hasNext) Some(it.next()) else None

  /** Every data file under `status`, as Spark's listing finds them. */
  private def dataFiles(fs: FileSystem, status: FileStatus): Seq[FileStatus] =
    if (!status.isDirectory) Seq(status)
    else {
      fs.listStatus(status.getPath).filterNot(s => skipped(s.getPath.getName))
        .toSeq.flatMap(dataFiles(fs, _))
    }
}
