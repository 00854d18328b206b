package io.github.sparktfrecord.tools

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparktfrecord.framing.TFRecordReader
import io.github.sparktfrecord.sql.{TFRecordOptions, TFRecordRows, TFRecordSchemaInferencer}
import io.github.sparktfrecord.tfds.{TFDSDataset, TFDSFeatures}

/**
 * Looks inside TFRecord files without a Spark job, for tools on the driver or outside Spark: the
 * JVM side of the CLI's `inspect` and of `spark_tfrecord.local`, and the benchmarks' floor. Paths
 * are Hadoop paths: local files or any file system Hadoop is configured for. Options are the data
 * source's, with Spark's defaults where a session would give them
 * ([[TFRecordOptions.sessionFree]]).
 */
object TFRecordInspector {

  /**
   * Walks the framing of a file (decompressing by extension, else by the `compression` option)
   * and checks both CRCs of every record, parsing nothing: the floor under any reader. Returns
   * the number of records.
   */
  def countRecords(path: String, options: java.util.Map[String, String]): Long = {
    val reader = openFile(path, TFRecordOptions.sessionFree(options), keepData = false)
    try {
      var n = 0L
      while (reader.next()) n += 1
      n
    } finally reader.close()
  }

  /** [[countRecords]] with the default options. */
  def countRecords(path: String): Long =
    countRecords(path, java.util.Collections.emptyMap[String, String]())

  /**
   * The data files under `path` (itself when it is a file; every match when it is a glob),
   * recursively, skipping names that start with `_` or `.` as Spark does, and TFDS metadata
   * files, sorted by path: each as "size<TAB>path". A glob that matches nothing gives none; a
   * path that does not exist fails with `FileNotFoundException`.
   */
  def listFiles(path: String): Array[String] = {
    val root = new Path(path)
    val fs = root.getFileSystem(new Configuration())
    val found = Array.newBuilder[String]
    def visit(status: FileStatus, top: Boolean): Unit = {
      val file = status.getPath
      val name = file.getName
      if (!top && (name.startsWith("_") || name.startsWith("."))) return
      if (status.isDirectory) fs.listStatus(file).foreach(visit(_, top = false))
      else if (top || !isTFDSMetadata(file)) found += s"${status.getLen}\t$file"
    }
    // globStatus returns the path itself when it has no glob characters, null when it is missing.
    val matches = Option(fs.globStatus(root)).getOrElse(Array.empty[FileStatus])
    if (matches.isEmpty && !hasGlob(path)) fs.getFileStatus(root) // FileNotFoundException
    matches.foreach(visit(_, top = true))
    found.result().sortBy(_.split('\t')(1))
  }

  private def isTFDSMetadata(file: Path): Boolean =
    TFDSDataset.isMetadata(file) || file.getName.endsWith(".labels.txt")

  private def hasGlob(path: String): Boolean = path.exists(c => "*?[]{}".indexOf(c) >= 0)

  /**
   * The TensorFlow Datasets version folder at `path` (a folder with `dataset_info.json`) or just
   * under it (a dataset folder holding one version), or null when `path` is neither.
   */
  def tfdsFolder(path: String): String = {
    val root = new Path(path)
    val conf = new Configuration()
    val fs = root.getFileSystem(conf)
    def isVersion(p: Path): Boolean = fs.exists(new Path(p, TFDSDataset.InfoFile))
    if (!fs.getFileStatus(root).isDirectory) null
    else if (isVersion(root)) fs.getFileStatus(root).getPath.toString
    else {
      val versions = fs.listStatus(root).filter(s => s.isDirectory && isVersion(s.getPath))
      if (versions.length == 1) versions(0).getPath.toString else null
    }
  }

  /**
   * The dataset of a TFDS version folder: its first line "name<TAB>version", then one line per
   * shard of each split, in the order of `dataset_info.json`:
   * "split<TAB>records<TAB>bytes<TAB>path", the records as `dataset_info.json` counts them, the
   * bytes the file's size. Fails naming the folder when `dataset_info.json` cannot be used.
   */
  def tfdsShards(folder: String): Array[String] = {
    val root = new Path(folder)
    val conf = new Configuration()
    val fs = root.getFileSystem(conf)
    val info = TFDSDataset.readInfo(root, conf).getOrElse(
      throw new java.io.FileNotFoundException(s"$folder/${TFDSDataset.InfoFile}"))
    val splits = info.splits
    // readSplit refuses a folder of another file format than tfrecord, naming it.
    if (splits.nonEmpty) TFDSDataset.readSplit(root, splits.head.name, conf)
    val lines = Array.newBuilder[String]
    lines += s"${info.name}\t${info.version}"
    for (split <- splits; (name, records) <- info.shardNames(split).zip(split.shardLengths)) {
      val shard = fs.getFileStatus(new Path(root, name))
      lines += s"${split.name}\t$records\t${shard.getLen}\t${shard.getPath}"
    }
    lines.result()
  }

  /** The schema of a read of a TFDS version folder, from its `features.json`, as JSON. */
  def tfdsSchemaJson(folder: String): String = {
    val root = new Path(folder)
    val conf = new Configuration()
    val (features, names) = TFDSDataset.readFeatures(root, conf).getOrElse(
      throw new java.io.FileNotFoundException(s"$folder/${TFDSDataset.FeaturesFile}"))
    TFDSFeatures.schema(features, names).json
  }

  /** The schema the data source would infer for these files, as `StructType` JSON. */
  def inferSchemaJson(paths: Array[String], options: java.util.Map[String, String]): String = {
    val conf = new Configuration()
    val statuses = paths.toSeq.map { p =>
      val path = new Path(p)
      path.getFileSystem(conf).getFileStatus(path)
    }
    TFRecordSchemaInferencer.infer(statuses, TFRecordOptions.sessionFree(options), conf).json
  }

  /**
   * The first `limit` records of the files, decoded with `schemaJson`, each as one JSON object.
   * Bytes (string and binary columns) are shown as text when they are valid UTF-8, else as
   * `0x…` hex; NaN and infinities as strings.
   */
  def readRecordsJson(
      paths: Array[String],
      schemaJson: String,
      options: java.util.Map[String, String],
      limit: Int): Array[String] = {
    val schema = DataType.fromJson(schemaJson).asInstanceOf[StructType]
    val parsed = TFRecordOptions.sessionFree(options)
    val json = new JsonText(schema)
    val out = Array.newBuilder[String]
    var n = 0
    val it = paths.iterator
    while (n < limit && it.hasNext) {
      val path = it.next()
      val reader = openFile(path, parsed, keepData = true)
      try {
        val decode = TFRecordRows.decoder(schema, parsed, path)
        while (n < limit && reader.next()) {
          val row = decode(reader)
          if (row != null) {
            out += json.row(row)
            n += 1
          }
        }
      } finally reader.close()
    }
    out.result()
  }

  private def openFile(
      file: String,
      options: TFRecordOptions,
      keepData: Boolean): TFRecordReader = {
    val path = new Path(file)
    val conf = new Configuration()
    val length = path.getFileSystem(conf).getFileStatus(path).getLen
    TFRecordReader.open(path, conf, options.framing(keepData), length)
  }
}
