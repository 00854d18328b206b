package io.github.sparktfrecord.tfds

import java.io.{FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.github.sparktfrecord.codec.RecordSerializer.ValueCounts
import io.github.sparktfrecord.framing.{AtomicWrite, HadoopCompat}
import io.github.sparktfrecord.json.{Json, JsonParser}

/**
 * The manifest every write leaves at the root of its folder, `_tfrecord_manifest.json`: each data
 * file's path (relative to the folder), record count and bytes, the Spark schema of the records,
 * the record type, and per feature the fewest and most values one record held. Trainers read it
 * without Spark (`spark_tfrecord.dataset_info`, `feature_spec(path)`, `tf_dataset`).
 *
 * The counts come from the write tasks ([[TaskCounts]], a hidden file beside each data file,
 * committed with it), gathered at job commit by [[TFRecordShardedWrite.finish]]: no file is read
 * again. A manifest is valid only while the folder's data files ([[dataFiles]]) are exactly its
 * files with their sizes; readers check that with one listing, and a commit that finds a data
 * file it cannot account for (written by another tool, or by a write that kept no manifest)
 * leaves no manifest rather than a wrong one.
 */
private[sparktfrecord] object TFRecordManifest {
  val FileName = "_tfrecord_manifest.json"
  val LockName = "_tfrecord_manifest.lock"
  val Format = "spark-tfrecord-manifest"
  val Version = 1
  /** How long a commit waits for another write's commit to release the folder's lock. */
  val LockWaitKey = "spark.tfrecord.manifest.lockWait"
  val DefaultLockWaitSeconds = 120L
  /** A lock older than this was left by a commit that died: it is taken over. */
  private val StaleLockMillis = 30L * 60 * 1000
  private val Log = LoggerFactory.getLogger(getClass)

  /** One data file: its path relative to the folder ('/'-separated), records and bytes. */
  final case class Entry(path: String, records: Long, bytes: Long, compression: String)

  /** What a manifest holds; see the object's doc. */
  final case class Manifest(
      recordType: String,
      schemaDDL: String,
      schemaJson: String,
      partitionColumns: Seq[String],
      files: Seq[Entry],
      counts: ValueCounts) {

    def records: Long = files.map(_.records).sum

    def text: String = {
      val fields = Vector.newBuilder[(String, Json)]
      fields ++= Seq(
        "format" -> Json.str(Format),
        "version" -> Json.num(Version),
        "record_type" -> Json.str(recordType),
        "schema" -> Json.str(schemaDDL),
        "schema_json" -> JsonParser.parse(schemaJson),
        "partition_columns" -> Json.arr(partitionColumns.map(Json.str)),
        "num_records" -> Json.num(records),
        "num_bytes" -> Json.num(files.map(_.bytes).sum),
        "files" -> Json.arr(files.sortBy(_.path).map { f =>
          Json.obj("path" -> Json.str(f.path), "num_records" -> Json.num(f.records),
            "num_bytes" -> Json.num(f.bytes), "compression" -> Json.str(f.compression))
        }),
        "features" -> countsJson(counts.features))
      if (recordType == "SequenceExample") fields += "feature_lists" -> countsJson(counts.lists)
      Json.Obj(fields.result()).indented
    }
  }

  private def countsJson(counts: Map[String, (Int, Int)]): Json =
    Json.Obj(counts.toVector.sortBy(_._1).map { case (key, (lo, hi)) =>
      key -> Json.obj("min" -> Json.num(lo), "max" -> Json.num(hi))
    })

  private def readCounts(node: Option[Json]): Map[String, (Int, Int)] =
    node.toSeq.flatMap(_.fields).map { case (key, range) =>
      key -> ((range("min").int, range("max").int))
    }.toMap

  /** The manifest in `folder`, if it has one this version reads; None otherwise. */
  def read(folder: Path, conf: Configuration): Option[Manifest] = {
    val text = TFDSDataset.readText(new Path(folder, FileName), conf)
    text.flatMap { t =>
      try {
        val root = JsonParser.parse(t)
        if (root.field("format").map(_.text) != Some(Format) ||
            root.field("version").map(_.int) != Some(Version)) None
        else Some(Manifest(
          root("record_type").text,
          root("schema").text,
          root("schema_json").compact,
          root("partition_columns").elements.map(_.text),
          root("files").elements.map { f =>
            Entry(f("path").text, f("num_records").long, f("num_bytes").long,
              f("compression").text)
          },
          ValueCounts(readCounts(root.field("features")),
            readCounts(root.field("feature_lists")))))
      } catch {
        // Not one we can merge with: the commit then decides as if there were none.
        case _: Exception => None
      }
    }
  }

  /** What one write task's file held, written beside it when it closes (a hidden file). */
  final case class TaskCounts(records: Long, counts: ValueCounts) {
    def text: String = Json.obj(
      "records" -> Json.num(records),
      "features" -> countsJson(counts.features),
      "feature_lists" -> countsJson(counts.lists)).compact
  }

  object TaskCounts {
    def parse(text: String): TaskCounts = {
      val root = JsonParser.parse(text)
      TaskCounts(root("records").long,
        ValueCounts(readCounts(root.field("features")), readCounts(root.field("feature_lists"))))
    }
  }

  /** Whether a file or folder name is one Spark and TensorFlow's globs pass over. */
  def hidden(name: String): Boolean = name.startsWith("_") || name.startsWith(".")

  /** A TFDS dataset's metadata beside its shards: not data. */
  private def metadata(name: String): Boolean =
    name == TFDSDataset.InfoFile || name == TFDSDataset.FeaturesFile ||
      name.endsWith(".labels.txt")

  /**
   * The data files under `folder` (descending into folders that are not hidden, as partition
   * folders are), by path relative to it, with their sizes.
   */
  def dataFiles(fs: FileSystem, folder: Path): Map[String, Long] = {
    if (!fs.exists(folder)) return Map.empty
    val found = Map.newBuilder[String, Long]
    def walk(dir: Path, prefix: String): Unit =
      fs.listStatus(dir).foreach { s =>
        val name = s.getPath.getName
        if (!hidden(name)) {
          if (s.isDirectory) walk(s.getPath, prefix + name + "/")
          else if (!(prefix.isEmpty && metadata(name))) found += (prefix + name) -> s.getLen
        }
      }
    walk(folder, "")
    found.result()
  }

  /**
   * Merges a write's files into the folder's manifest. `old`: the manifest before this write
   * (None: there was none). `replaced`: the partition folders this write overwrote (dynamic
   * partition overwrite), whose earlier files are gone. `listed`: the data files now in the
   * folder outside `replaced`. Earlier entries whose file is gone or changed are dropped; None
   * when a listed file is in neither the manifest nor this write, so that no manifest misses one.
   */
  def merge(
      old: Option[Manifest],
      written: Manifest,
      replaced: Set[String],
      listed: Map[String, Long]): Either[String, Manifest] = {
    def under(path: String, dirs: Set[String]) =
      dirs.exists(d => path.startsWith(d + "/"))
    val mine = written.files.map(_.path).toSet
    val kept = old.toSeq.flatMap(_.files).filter { e =>
      !mine(e.path) && !under(e.path, replaced) && listed.get(e.path).contains(e.bytes)
    }
    val known = kept.map(_.path).toSet ++ mine
    listed.keys.filterNot(p => known(p) || under(p, replaced)).toSeq.sorted.headOption match {
      case Some(unknown) =>
        Left(s"the folder holds $unknown, which no manifest of its writes counted")
      case None =>
        val counts = if (kept.isEmpty) written.counts
        else mergeCounts(old.get.counts, written.counts)
        Right(written.copy(files = kept ++ written.files, counts = counts))
    }
  }

  /** Fewest and most over two sets of files; a feature one side lacks had 0 values there. */
  def mergeCounts(a: ValueCounts, b: ValueCounts): ValueCounts = {
    def both(x: Map[String, (Int, Int)], y: Map[String, (Int, Int)], absentIsZero: Boolean) =
      (x.keySet ++ y.keySet).map { k =>
        val ranges = Seq(x.get(k), y.get(k))
        val lo = ranges.map(_.map(_._1).getOrElse(if (absentIsZero) 0 else Int.MaxValue)).min
        k -> ((lo, ranges.flatten.map(_._2).max))
      }.toMap
    ValueCounts(both(a.features, b.features, absentIsZero = true),
      both(a.lists, b.lists, absentIsZero = false))
  }

  /** Writes `manifest` into `folder` whole or not at all. */
  def write(fs: FileSystem, folder: Path, manifest: Manifest): Unit =
    AtomicWrite(fs, new Path(folder, FileName))(
      _.write(manifest.text.getBytes(UTF_8)))

  /** Removes the folder's manifest (it could no longer be kept true), saying why. */
  def drop(fs: FileSystem, folder: Path, why: String): Unit = {
    val file = new Path(folder, FileName)
    if (fs.exists(file)) {
      Log.warn(s"$folder keeps no $FileName: $why. Readers count its records from the files.")
      fs.delete(file, false)
    } else {
      Log.info(s"$folder keeps no $FileName: $why.")
    }
  }

  /** A held lock on a folder's manifest; see [[lock]]. */
  final class Lock private[TFRecordManifest] (fs: FileSystem, file: Path) {
    def release(): Unit = fs.delete(file, false)
  }

  /**
   * Takes the folder's manifest lock, so that two writes committing into one folder at once
   * merge one after the other (both counted): waits up to `waitSeconds` for another commit to
   * finish, then fails naming the lock. A lock older than half an hour is taken over.
   */
  def lock(fs: FileSystem, folder: Path, owner: String, waitSeconds: Long): Lock = {
    val file = new Path(folder, LockName)
    val deadline = System.nanoTime() + waitSeconds * 1000000000L
    while (true) {
      try {
        val out = HadoopCompat.createNew(fs, file)
        try out.write(owner.getBytes(UTF_8))
        finally out.close()
        return new Lock(fs, file)
      } catch {
        case e: IOException if e.isInstanceOf[FileAlreadyExistsException] || fs.exists(file) =>
          val age = try System.currentTimeMillis() - fs.getFileStatus(file).getModificationTime
          catch { case _: FileNotFoundException => 0L }
          if (age > StaleLockMillis) {
            Log.warn(s"Taking over $file, left $age ms ago by a commit that did not finish.")
            fs.delete(file, false)
          } else if (System.nanoTime() > deadline) {
            throw new IOException(s"Another write is committing into $folder (its lock $file " +
              s"is held): this write waited $waitSeconds s ($LockWaitKey) and gives up, leaving " +
              "the folder as it was. Write again; if no other write is running, delete the lock.")
          } else Thread.sleep(100)
      }
    }
    throw new IllegalStateException("unreachable")
  }
}
