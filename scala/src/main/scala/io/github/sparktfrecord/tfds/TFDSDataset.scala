package io.github.sparktfrecord.tfds

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.framing.{AtomicWrite, HadoopCompat}
import io.github.sparktfrecord.json.{Json, JsonParser}
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * A TensorFlow Datasets dataset folder (`<data_dir>/<name>/<version>/`), read and written
 * through the documented files of `tensorflow_datasets/core/folder_dataset/`:
 *
 *  - `dataset_info.json`: the name, version, file format and, per split, its `shardLengths`
 *    (records per shard, which `len()` and split slicing use) and `numBytes`;
 *  - `features.json`: the feature connectors ([[TFDSFeatures]]), and `<feature>.labels.txt`
 *    with the class names of each ClassLabel that has them;
 *  - the shards, named by TFDS's default template `{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}`:
 *    `mnist-train.tfrecord-00000-of-00004`.
 */
private[sparktfrecord] object TFDSDataset {
  final val InfoFile = "dataset_info.json"
  final val FeaturesFile = "features.json"
  final val FileFormat = "tfrecord"
  final val DefaultTemplate = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"

  /** A split of `dataset_info.json`: its name, the records of each shard, its bytes. */
  final case class Split(name: String, shardLengths: Seq[Long], numBytes: Long, template: String)

  /** The dataset's `dataset_info.json` as a JSON tree: its fields are kept when it is written. */
  final class Info(val json: Json.Obj) {
    private def textOf(key: String): Option[String] = json.field(key).map(_.text)

    def name: String = textOf("name").getOrElse("")

    def version: String = textOf("version").getOrElse("")

    def fileFormat: String = textOf("fileFormat").getOrElse(FileFormat)

    private def splitsJson: Seq[Json] = json.field("splits").toSeq.flatMap(_.elements)

    def splits: Seq[Split] = splitsJson.map { s =>
      Split(s("name").text, s.field("shardLengths").toSeq.flatMap(_.elements).map(_.long),
        s.field("numBytes").map(_.long).getOrElse(0L),
        s.field("filepathTemplate").map(_.text).getOrElse(DefaultTemplate))
    }

    def split(name: String): Option[Split] = splits.find(_.name == name)

    /** The shard file names of a split, in order. */
    def shardNames(split: Split): Seq[String] = {
      val n = split.shardLengths.length
      (0 until n).map(i => shardName(split.template, name, split.name, fileFormat, i, n))
    }

    /** A copy with `split` in place of the split of its name (or added), `without` removed. */
    def withSplit(split: Option[Split], without: String): Info = {
      // The other splits as they were, with the fields only TFDS knows (statistics, ...).
      val kept = splitsJson.filter(s => s("name").text != without)
      new Info(json.updated("splits", Json.arr(kept ++ split.map(splitJson))))
    }

    // int64 fields as strings, as protobuf's JSON (and so TFDS) writes them.
    private def splitJson(s: Split): Json = Json.obj(
      "name" -> Json.str(s.name),
      "numBytes" -> Json.str(s.numBytes.toString),
      "shardLengths" -> Json.arr(s.shardLengths.map(l => Json.str(l.toString))),
      "filepathTemplate" -> Json.str(s.template))

    def text: String = json.indented
  }

  /** A new `dataset_info.json` with no split. */
  def newInfo(name: String, version: String): Info = new Info(Json.obj(
    "name" -> Json.str(name),
    "version" -> Json.str(version),
    "fileFormat" -> Json.str(FileFormat),
    "description" -> Json.str("Written by spark-tfrecord."),
    "splits" -> Json.arr(Nil)))

  /** TFDS's template filled in: `{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}`. */
  def shardName(
      template: String,
      dataset: String,
      split: String,
      fileFormat: String,
      shard: Int,
      shards: Int): String =
    template.replace("{DATASET}", dataset).replace("{SPLIT}", split)
      .replace("{FILEFORMAT}", fileFormat)
      .replace("{SHARD_X_OF_Y}", f"$shard%05d-of-$shards%05d")
      .replace("{SHARD_INDEX}", f"$shard%05d")
      .replace("{NUM_SHARDS}", f"$shards%05d")

  /** The dataset info of `folder`, if it has one. */
  def readInfo(folder: Path, conf: Configuration): Option[Info] =
    readText(new Path(folder, InfoFile), conf).map { text =>
      JsonParser.parse(text) match {
        case o: Json.Obj => new Info(o)
        case _ => throw TFRecordError.argument(TFRecordError.DatasetFolder,
            s"$folder/$InfoFile is not a JSON object")
      }
    }

  def readText(file: Path, conf: Configuration): Option[String] = {
    val fs = HadoopCompat.raw(file.getFileSystem(conf))
    try {
      val in = fs.open(file)
      try Some(new String(in.readAllBytes(), UTF_8))
      finally in.close()
    } catch {
      case _: FileNotFoundException => None
    }
  }

  /** Writes `text` to `file` so that it appears whole or not at all ([[AtomicWrite]]). */
  def writeAtomically(fs: FileSystem, file: Path, text: String): Unit =
    AtomicWrite(fs, file)(_.write(text.getBytes(UTF_8)))

  /** The features of the dataset in `folder`, and the class names of its ClassLabels. */
  def readFeatures(folder: Path, conf: Configuration)
      : Option[(TFDSFeature.Dict, Map[String, Seq[String]])] =
    readText(new Path(folder, FeaturesFile), conf).map { json =>
      val features = TFDSFeatures.parse(json)
      val names = TFDSFeatures.classLabels(features).flatMap { path =>
        readText(new Path(folder, TFDSFeatures.labelsFile(path)), conf).map { text =>
          path -> text.split("\n").map(_.trim).filter(_.nonEmpty).toSeq
        }
      }.toMap
      (features, names)
    }

  /** The error for a read of a TFDS folder without a `split` option, listing its splits. */
  def splitNeeded(folder: Path, info: Info): IllegalArgumentException =
    TFRecordError.argument(TFRecordError.DatasetFolder,
      s"$folder is a TensorFlow Datasets folder: choose a split with the option " +
        s"'${TFRecordOptions.SplitOption}' (its splits: " +
        s"${info.splits.map(_.name).mkString(", ")}).")

  /** The error for a `split` the folder's `dataset_info.json` does not have. */
  def noSuchSplit(folder: Path, info: Info, split: String): IllegalArgumentException =
    TFRecordError.argument(TFRecordError.DatasetFolder,
      s"The TensorFlow Datasets folder $folder has no split '$split' " +
        s"(its splits: ${info.splits.map(_.name).mkString(", ")}).")

  /** The split of the dataset in `folder` a read asks for, with its shard names. */
  def readSplit(folder: Path, split: String, conf: Configuration): (Info, Split) = {
    val info = readInfo(folder, conf).getOrElse(throw TFRecordError.argument(
      TFRecordError.DatasetFolder,
      s"The option '${TFRecordOptions.SplitOption}' reads a TensorFlow Datasets folder, and " +
        s"$folder has no $InfoFile."))
    if (info.fileFormat != FileFormat) {
      throw TFRecordError.argument(TFRecordError.DatasetFolder,
        s"The TensorFlow Datasets folder $folder holds " +
          s"${info.fileFormat} files; spark-tfrecord reads tfrecord ones.")
    }
    (info, info.split(split).getOrElse(throw noSuchSplit(folder, info, split)))
  }

  /** Whether `file` is a TFDS metadata file, never read as data. */
  def isMetadata(file: Path): Boolean =
    file.getName == InfoFile || file.getName == FeaturesFile

  /** The error for a read of the TFDS folder `folder` without a split, listing its splits. */
  def splitNeeded(folder: Path, conf: Configuration): IllegalArgumentException =
    readInfo(folder, conf).map(splitNeeded(folder, _)).getOrElse(TFRecordError.argument(
      TFRecordError.DatasetFolder,
      s"$folder/$InfoFile is TensorFlow Datasets metadata, not TFRecord data."))

  /** The shard file names of a split of the dataset in `folder`. */
  def shardNames(folder: Path, split: String, conf: Configuration): Set[String] = {
    val (info, s) = readSplit(folder, split, conf)
    info.shardNames(s).toSet
  }

  /**
   * The schema of a read of a TFDS folder: with the option `split`, from the folder's
   * `features.json`; None when `files` are not a TFDS folder's and no split is asked for.
   */
  def schema(
      files: Seq[org.apache.hadoop.fs.FileStatus],
      options: TFRecordOptions,
      conf: Configuration): Option[org.apache.spark.sql.types.StructType] = {
    val info = files.map(_.getPath).find(_.getName == InfoFile)
    (options.split, info) match {
      case (None, None) => None
      case (None, Some(f)) => throw splitNeeded(f.getParent, conf)
      case (Some(_), None) => throw TFRecordError.argument(TFRecordError.DatasetFolder,
          s"The option '${TFRecordOptions.SplitOption}' reads a TensorFlow Datasets folder " +
            s"(<data_dir>/<name>/<version>, with $InfoFile), and the path read has no $InfoFile.")
      case (Some(split), Some(f)) =>
        val folder = f.getParent
        readSplit(folder, split, conf)
        val (features, names) = readFeatures(folder, conf).getOrElse(
          throw TFRecordError.argument(TFRecordError.DatasetFolder,
            s"The TensorFlow Datasets folder $folder has no " +
              s"$FeaturesFile to take the schema from."))
        Some(TFDSFeatures.schema(features, names))
    }
  }
}
