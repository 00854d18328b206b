package io.github.sparktfrecord.tfds

import java.io.IOException
import java.util.UUID

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.mapreduce.{Job, OutputCommitter}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.{HadoopCompat, TFRecordCompression, TFRecordFraming}
import io.github.sparktfrecord.framing.TFRecordWriter
import io.github.sparktfrecord.sql.{CountedWrite, TFRecordOptions}

/**
 * A write whose files are named and counted at job commit: a TensorFlow Datasets split (option
 * `tfds`), or TensorFlow's sharded names (`shardPrefix`).
 *
 * Each write task writes its file as usual, and beside it a hidden count file of its records
 * ([[countFile]]), committed with it. [[TFRecordShardCommitter]] then, at job commit, numbers the
 * files in the order of the tasks that wrote them, adds empty ones up to `numShards`, and for a
 * TFDS split writes `dataset_info.json` with each shard's count and the split's bytes: the
 * counts come from the write itself, never from reading the files again.
 *
 * A TFDS dataset is only ever seen whole: a reader finds shards through `dataset_info.json`,
 * which is replaced in one rename after the shards are in place, and a job that fails before its
 * commit leaves the folder as it was (Spark's commit protocol discards its files).
 */
private[sparktfrecord] object TFRecordShardedWrite {
  private val Mapper = new ObjectMapper()
  private val Prefix = "spark.tfrecord.shards."
  private val WriteIdKey = Prefix + "writeId"
  private val FolderKey = Prefix + "folder"
  private val OptionsKey = Prefix + "options."
  private val SchemaKey = Prefix + "schema"
  private val CountPrefix = "_count-"
  /** The class of the commit protocol the committer is installed through (Spark's default). */
  private val CommitProtocol =
    "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"

  /** What [[prepare]] decided: the schema to serialize with, and the write's id. */
  final case class Prepared(schema: StructType, writeId: String, requireValues: Boolean)
    extends CountedWrite {
    override def fileClosed(path: Path, records: Long, conf: Configuration): Unit =
      writeCount(path, writeId, records, conf)
  }

  def isSharded(options: TFRecordOptions): Boolean =
    options.tfds.isDefined || options.shardPrefix.isDefined

  /**
   * On the driver, before the job: refuses what a sharded write cannot do (with the reason),
   * checks a TFDS split against the folder and its features, and installs the committer.
   */
  def prepare(
      job: Job,
      options: Map[String, String],
      parsed: TFRecordOptions,
      dataSchema: StructType): Option[Prepared] = {
    val what = parsed.tfds.map(_ => s"'${TFRecordOptions.TfdsOption}' (a TFDS dataset)")
      .getOrElse(s"'${TFRecordOptions.ShardPrefixOption}' (sharded file names)")
    def refuse(why: String): Nothing =
      throw TFRecordError.argument(TFRecordError.InvalidOption, s"A write with $what cannot $why.")
    if (!isSharded(parsed)) {
      if (parsed.numShards.isDefined || parsed.tfdsFeatures.isDefined) {
        throw TFRecordError.argument(TFRecordError.InvalidOption,
          s"The options '${TFRecordOptions.NumShardsOption}' " +
            s"and '${TFRecordOptions.TfdsFeaturesOption}' apply to writes with " +
            s"'${TFRecordOptions.TfdsOption}' or '${TFRecordOptions.ShardPrefixOption}'.")
      }
      return None
    }
    if (parsed.tfds.isDefined && parsed.shardPrefix.isDefined) {
      refuse(s"also take '${TFRecordOptions.ShardPrefixOption}': TFDS names its shards itself")
    }
    val partitionColumns = options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(DataSourceUtils.PARTITIONING_COLUMNS_KEY) =>
        DataSourceUtils.decodePartitioningColumns(v)
    }.getOrElse(Nil)
    if (partitionColumns.nonEmpty) {
      refuse("be partitioned (partitionBy): its shards are one sequence of files in one folder")
    }
    if (options.keys.exists(_.equalsIgnoreCase("maxRecordsPerFile")) ||
        SQLConf.get.maxRecordsPerFile > 0) {
      refuse("take maxRecordsPerFile: each write task writes one shard, numbered at job commit")
    }
    if (parsed.writeIndex) {
      refuse(s"write index files (${TFRecordOptions.WriteIndexOption}): files are renamed at " +
        "job commit; index them afterwards with spark-tfrecord index")
    }
    val protocol = SQLConf.get.getConfString(SQLConf.FILE_COMMIT_PROTOCOL_CLASS.key,
      CommitProtocol)
    if (protocol != CommitProtocol) {
      refuse(s"run under the commit protocol $protocol " +
        s"(${SQLConf.FILE_COMMIT_PROTOCOL_CLASS.key}): its files are numbered by a job " +
        s"committer that only $CommitProtocol installs")
    }
    val folder = FileOutputFormat.getOutputPath(job)
    val conf = job.getConfiguration
    if (folder.getFileSystem(conf).exists(new Path(folder, "_spark_metadata"))) {
      refuse("be a streaming sink: its files are committed by the sink's own log " +
        "(_spark_metadata), never by the job committer that names and counts them")
    }
    val prepared = parsed.tfds match {
      case None =>
        // Whether the folder already has shards of the prefix is checked at job setup
        // ([[checkPrefixFree]]): on Spark 4.x, mode overwrite empties the folder after
        // prepareWrite, just before the job's setup.
        dataSchema
      case Some(name) =>
        if (parsed.recordType != RecordType.Example) {
          refuse(s"take recordType ${parsed.recordType.name}: TFDS reads tf.train.Example records")
        }
        if (parsed.compression != TFRecordCompression.None) {
          refuse(s"be compressed (${parsed.compression.name}): TFDS reads uncompressed shards")
        }
        if (parsed.pathSeparator != TFRecordOptions.DefaultPathSeparator) {
          refuse(s"take pathSeparator '${parsed.pathSeparator}': TFDS names nested features " +
            "with /")
        }
        val split = parsed.split.getOrElse(refuse(
          s"go without the option '${TFRecordOptions.SplitOption}' (the split to write)"))
        checkDataset(folder, conf, name, parsed, split, dataSchema)
    }
    val writeId = UUID.randomUUID().toString
    conf.set(WriteIdKey, writeId)
    conf.set(FolderKey, folder.toString)
    conf.set(SchemaKey, prepared.json)
    options.foreach { case (k, v) => conf.set(OptionsKey + k, v) }
    conf.setClass(SQLConf.OUTPUT_COMMITTER_CLASS.key, classOf[TFRecordShardCommitter],
      classOf[OutputCommitter])
    // The commit protocol loads the committer through the configuration's class loader, which
    // does not see a jar added to a running session (ADD JAR, addArtifacts): ours does.
    conf.setClassLoader(classOf[TFRecordShardCommitter].getClassLoader)
    // Version 2 would move each task's files into the folder at task commit: a failed job would
    // leave them there.
    conf.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1)
    Some(Prepared(prepared, writeId, requireValues = parsed.tfds.isDefined))
  }

  /** Checks a TFDS split's write against the folder; returns the schema with its features. */
  private def checkDataset(
      folder: Path,
      conf: Configuration,
      name: String,
      parsed: TFRecordOptions,
      split: String,
      dataSchema: StructType): StructType = {
    val info = TFDSDataset.readInfo(folder, conf)
    info.foreach { i =>
      if (i.name.nonEmpty && i.name != name) {
        throw TFRecordError.argument(TFRecordError.DatasetFolder,
          s"$folder holds the TFDS dataset '${i.name}', not '$name'.")
      }
      if (i.split(split).isDefined && parsed.tfdsMode != "overwrite") {
        throw TFRecordError.argument(TFRecordError.DatasetFolder,
          s"The TFDS dataset in $folder already has the split " +
            s"'$split' (${i.split(split).get.shardLengths.sum} records). Write it with mode " +
            "overwrite to replace it, or choose another split.")
      }
    }
    val asGiven = parsed.tfdsFeatures.map(TFDSFeatures.parse)
    val existing = TFDSDataset.readFeatures(folder, conf).map(_._1)
    (asGiven, existing) match {
      case (Some(g), Some(e)) if g != e =>
        throw TFRecordError.argument(TFRecordError.TfdsFeatures,
          s"The features given differ from those of the " +
            s"dataset in $folder (its ${TFDSDataset.FeaturesFile}); a split is written with the " +
            "dataset's features.")
      case _ =>
    }
    val features = existing.orElse(asGiven).getOrElse(TFDSFeatures.fromSchema(dataSchema))
    TFDSFeatures.check(dataSchema, features)
  }

  /** The hidden file beside `data` holding its record count, for the write `writeId`. */
  def countFile(data: Path, writeId: String): Path =
    new Path(data.getParent, s"$CountPrefix$writeId-${data.getName}")

  /** Writes the count file of `data`: the number of its records, in ASCII decimal. */
  def writeCount(data: Path, writeId: String, records: Long, conf: Configuration): Unit = {
    val file = countFile(data, writeId)
    val out = file.getFileSystem(conf).create(file, false)
    try out.write(records.toString.getBytes("US-ASCII"))
    finally out.close()
  }

  /**
   * At job setup, before any task runs and after mode overwrite has emptied the folder: a
   * `shardPrefix` write numbers all the files of its prefix, so the folder must hold none yet.
   */
  def checkPrefixFree(conf: Configuration): Unit = {
    if (conf.get(WriteIdKey) == null) return
    val options = TFRecordOptions.sessionFree(HadoopCompat.propsWithPrefix(conf, OptionsKey))
    val prefix = options.shardPrefix match {
      case Some(p) if options.tfds.isEmpty => p
      case _ => return
    }
    val folder = new Path(conf.get(FolderKey))
    val fs = folder.getFileSystem(conf)
    val taken = if (!fs.exists(folder)) Nil
    else fs.listStatus(folder).map(_.getPath.getName)
      .filter(n => n.startsWith(prefix + "-") && n.contains("-of-")).toSeq
    if (taken.nonEmpty) {
      throw TFRecordError.argument(TFRecordError.DatasetFolder,
        s"$folder already has files named $prefix-NNNNN-of-NNNNN (${taken.sorted.head}): a " +
          "sharded write numbers all the files of its prefix, so it writes into a folder " +
          "without them (mode overwrite empties it first), or with another shardPrefix.")
    }
  }

  /**
   * At job commit, after the task files are in the folder: numbers them, adds empty shards,
   * and for a TFDS split writes the dataset's metadata. See the object's doc.
   */
  def finish(conf: Configuration): Unit = {
    val writeId = conf.get(WriteIdKey)
    if (writeId == null) return
    val folder = new Path(conf.get(FolderKey))
    val options = TFRecordOptions.sessionFree(HadoopCompat.propsWithPrefix(conf, OptionsKey))
    val fs = folder.getFileSystem(conf)
    val mine = s"$CountPrefix$writeId-"
    val counts = fs.listStatus(folder).map(_.getPath).filter(_.getName.startsWith(mine))
      .sortBy(_.getName).toSeq
    val files = counts.map(c => new Path(folder, c.getName.substring(mine.length)))
    val records = counts.map(c => TFDSDataset.readText(c, conf).get.trim.toLong)
    val n = options.numShards.getOrElse(math.max(1, files.length))
    // What can be refused is refused before a file is renamed, and then this job's files go:
    // the folder is left as it was before the job.
    def refuse(why: String): Nothing = {
      (files ++ counts :+ new Path(folder, "_SUCCESS")).foreach(fs.delete(_, false))
      throw new IOException(why)
    }
    if (files.length > n) {
      refuse(s"The write produced ${files.length} files, more than its " +
        s"${TFRecordOptions.NumShardsOption} $n: repartition the DataFrame to $n partitions " +
        "(write_tfds and TFDS.write do).")
    }
    val lengths = records.toSeq ++ Seq.fill(n - files.length)(0L)
    // TFDS counts the bytes of the records' data, without their framing.
    val bytes = files.map(f => fs.getFileStatus(f).getLen).sum -
      TFRecordFraming.OverheadBytes * lengths.sum
    try {
      options.tfds match {
        case Some(name) =>
          finishDataset(fs, folder, conf, options, name, files, lengths, bytes)
        case None =>
          val names = shardNames(options.shardPrefix.get, n, options.compression)
          names.find(name => fs.exists(new Path(folder, name))).foreach { name =>
            refuse(s"$folder already has a file $name (written meanwhile).")
          }
          place(fs, folder, files, names, conf, options.compression)
      }
    } finally counts.foreach(fs.delete(_, false))
  }

  /** TensorFlow's sharded names: `<prefix>-00000-of-00016`, and the compression's extension. */
  private def shardNames(prefix: String, n: Int, compression: TFRecordCompression): Seq[String] =
    (0 until n).map(i => f"$prefix-$i%05d-of-$n%05d${compression.extension}")

  private def finishDataset(
      fs: FileSystem,
      folder: Path,
      conf: Configuration,
      options: TFRecordOptions,
      name: String,
      files: Seq[Path],
      lengths: Seq[Long],
      bytes: Long): Unit = {
    val split = options.split.get
    val info = TFDSDataset.readInfo(folder, conf)
      .getOrElse(TFDSDataset.newInfo(name, options.tfdsVersion))
    val old = info.split(split)
    if (old.isDefined && options.tfdsMode != "overwrite") {
      throw new IOException(s"The split '$split' appeared in $folder during the write.")
    }
    // The split leaves dataset_info.json before its old shards go: a reader meanwhile finds no
    // split (an error), never a mix of old and new shards.
    old.foreach { s =>
      TFDSDataset.writeAtomically(fs, new Path(folder, TFDSDataset.InfoFile),
        info.withSplit(None, split).text)
      info.shardNames(s).foreach(f => fs.delete(new Path(folder, f), false))
    }
    val template = TFDSDataset.DefaultTemplate
    val names = lengths.indices.map(i =>
      TFDSDataset.shardName(template, name, split,
        TFDSDataset.FileFormat, i, lengths.length))
    place(fs, folder, files, names, conf, TFRecordCompression.None)
    if (!fs.exists(new Path(folder, TFDSDataset.FeaturesFile))) {
      // The features as given (TFDS's own JSON, with what only TFDS uses: image formats, box
      // formats, descriptions), else those derived from the schema.
      val features = options.tfdsFeatures.getOrElse(TFDSFeatures.toJson(
        TFDSFeatures.fromSchema(DataType.fromJson(conf.get(SchemaKey)).asInstanceOf[StructType])))
      options.tfdsClassNames.foreach { json =>
        TFDSFeatures.fields(Mapper.readTree(json)).foreach { case (path, names) =>
          val text = TFDSFeatures.elements(names).map(_.asText).mkString("", "\n", "\n")
          TFDSDataset.writeAtomically(fs, new Path(folder, TFDSFeatures.labelsFile(path)), text)
        }
      }
      TFDSDataset.writeAtomically(fs, new Path(folder, TFDSDataset.FeaturesFile), features)
    }
    val written = TFDSDataset.Split(split, lengths, bytes, template)
    TFDSDataset.writeAtomically(fs, new Path(folder, TFDSDataset.InfoFile),
      info.withSplit(Some(written), split).text)
  }

  /** Renames `files` to the first `names`, and writes the rest as files of no record. */
  private def place(
      fs: FileSystem,
      folder: Path,
      files: Seq[Path],
      names: Seq[String],
      conf: Configuration,
      compression: TFRecordCompression): Unit =
    names.indices.foreach { i =>
      val target = new Path(folder, names(i))
      if (i < files.length) {
        if (fs.exists(target)) fs.delete(target, false)
        if (!fs.rename(files(i), target)) {
          throw new IOException(s"Cannot rename ${files(i)} to $target")
        }
      } else {
        new TFRecordWriter(target, conf, compression).close()
      }
    }
}
