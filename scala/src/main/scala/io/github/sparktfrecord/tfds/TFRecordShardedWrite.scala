package io.github.sparktfrecord.tfds

import java.io.IOException
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileSystem, Path}
import org.apache.hadoop.mapreduce.{Job, MRJobConfig, OutputCommitter}
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat

import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.codec.RecordSerializer.ValueCounts
import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.{HadoopCompat, TFRecordCompression, TFRecordFraming}
import io.github.sparktfrecord.framing.TFRecordWriter
import io.github.sparktfrecord.json.{Json, JsonParser}
import io.github.sparktfrecord.sql.{CountedWrite, TFRecordOptions}

/**
 * Writes whose files are counted at job commit: every write that runs under Spark's default
 * commit protocol, which then leaves its folder's manifest ([[TFRecordManifest]]), and among them
 * those whose files are also named then: a TensorFlow Datasets split (option `tfds`), or
 * TensorFlow's sharded names (`shardPrefix`).
 *
 * Each write task writes its file as usual, and beside it a hidden count file of its records and
 * of its features' numbers of values ([[countFile]]), committed with it. The job committer
 * ([[TFRecordShardCommitter]]) then, at job commit, numbers the files of a sharded write in the
 * order of the tasks that wrote them, adds empty ones up to `numShards`, for a TFDS split writes
 * `dataset_info.json` with each shard's count and the split's bytes, and for every write merges
 * the files into the folder's manifest: the counts come from the write itself, never from reading
 * the files again.
 *
 * A TFDS dataset is only ever seen whole: a reader finds shards through `dataset_info.json`,
 * which is replaced in one rename after the shards are in place, and a job that fails before its
 * commit leaves the folder as it was (Spark's commit protocol discards its files).
 */
private[sparktfrecord] object TFRecordShardedWrite {
  private val Prefix = "spark.tfrecord.shards."
  private val WriteIdKey = Prefix + "writeId"
  private val FolderKey = Prefix + "folder"
  private val OptionsKey = Prefix + "options."
  private val SchemaKey = Prefix + "schema"
  private val CountPrefix = "_count-"
  private val PartitionsKey = Prefix + "partitionColumns"
  private val DynamicKey = Prefix + "dynamic"
  private val LockWaitKey = Prefix + "lockWait"
  /** Set in a task's configuration by its job committer: its files are counted at job commit. */
  private[tfds] val CommitterKey = Prefix + "committed"
  /** Spark's staging folder of a dynamic partition overwrite, in the folder written. */
  private val StagingPrefix = ".spark-staging-"
  /** The class of the commit protocol the committer is installed through (Spark's default). */
  private val CommitProtocol =
    "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"

  /** What [[prepare]] decided: the schema to serialize with, and the write's id. */
  final case class Prepared(schema: StructType, writeId: String, requireValues: Boolean)
    extends CountedWrite {
    override def fileClosed(
        path: Path,
        records: Long,
        counts: ValueCounts,
        conf: Configuration): Unit =
      // Only under the job committer that gathers them: a streaming sink, say, commits the files
      // by its own log and would leave count files behind.
      if (conf.getBoolean(CommitterKey, false)) {
        writeCount(path, writeId, TFRecordManifest.TaskCounts(records, counts), conf)
      }
  }

  def isSharded(options: TFRecordOptions): Boolean =
    options.tfds.isDefined || options.shardPrefix.isDefined || options.tfxSplit.isDefined

  /** The folder of a TFX Examples split in the artifact's folder, and its files' prefix. */
  private def tfxFolder(split: String): String = s"Split-$split"
  private val TfxPrefix = "data_tfrecord"

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
      .orElse(parsed.tfxSplit.map(_ => s"'${TFRecordOptions.TfxSplitOption}' (a TFX split)"))
      .getOrElse(s"'${TFRecordOptions.ShardPrefixOption}' (sharded file names)")
    def refuse(why: String): Nothing =
      throw TFRecordError.argument(TFRecordError.InvalidOption, s"A write with $what cannot $why.")
    val partitionColumns = options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(DataSourceUtils.PARTITIONING_COLUMNS_KEY) =>
        DataSourceUtils.decodePartitioningColumns(v)
    }.getOrElse(Nil)
    val output = FileOutputFormat.getOutputPath(job)
    // A dynamic partition overwrite writes into Spark's staging folder inside the table's.
    val dynamic = output.getName.startsWith(StagingPrefix)
    val folder = if (dynamic) output.getParent else output
    val conf = job.getConfiguration
    val protocol = SQLConf.get.getConfString(SQLConf.FILE_COMMIT_PROTOCOL_CLASS.key,
      CommitProtocol)
    val streaming = folder.getFileSystem(conf).exists(new Path(folder, "_spark_metadata"))
    val theirCommitter = Option(conf.get(SQLConf.OUTPUT_COMMITTER_CLASS.key))
      .filter(_ != classOf[TFRecordShardCommitter].getName)
    if (!isSharded(parsed)) {
      if (parsed.tfdsFeatures.isDefined) {
        throw TFRecordError.argument(TFRecordError.InvalidOption,
          s"The option '${TFRecordOptions.TfdsFeaturesOption}' applies to writes with " +
            s"'${TFRecordOptions.TfdsOption}'.")
      }
      def uncounted(why: String): Nothing =
        throw TFRecordError.argument(TFRecordError.InvalidOption,
          s"A write with '${TFRecordOptions.NumShardsOption}' cannot $why.")
      if (parsed.numShards.isDefined) {
        if (partitionColumns.nonEmpty) {
          uncounted("be partitioned (partitionBy): it is the number of files of one folder")
        }
        if (options.keys.exists(_.equalsIgnoreCase("maxRecordsPerFile")) ||
            SQLConf.get.maxRecordsPerFile > 0) {
          uncounted("take maxRecordsPerFile: each write task writes one file")
        }
        if (protocol != CommitProtocol) {
          uncounted(s"run under the commit protocol $protocol: its files are counted by a " +
            s"job committer that only $CommitProtocol installs")
        }
        if (streaming) uncounted("be a streaming sink: its files are committed by the sink's log")
      }
      if (streaming) return None
      if (protocol != CommitProtocol || theirCommitter.isDefined) {
        // The files are committed by what we cannot follow: the folder's manifest would miss
        // them, so it goes now.
        TFRecordManifest.drop(folder.getFileSystem(conf), folder,
          s"it is written under ${theirCommitter.getOrElse(protocol)}, whose commits the " +
            "manifest cannot follow")
        return None
      }
      return Some(install(job, options, parsed, dataSchema, folder, dynamic, partitionColumns))
    }
    if (parsed.tfds.isDefined && parsed.shardPrefix.isDefined) {
      refuse(s"also take '${TFRecordOptions.ShardPrefixOption}': TFDS names its shards itself")
    }
    if (parsed.tfxSplit.isDefined) {
      if (parsed.tfds.isDefined || parsed.shardPrefix.isDefined) {
        refuse(s"also take '${TFRecordOptions.TfdsOption}' or " +
          s"'${TFRecordOptions.ShardPrefixOption}': TFX names its files itself")
      }
      if (parsed.compression != TFRecordCompression.Gzip) {
        refuse(s"be compressed with ${parsed.compression.name}: TFX's components read an " +
          "Examples artifact as GZIP")
      }
    }
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
    if (protocol != CommitProtocol) {
      refuse(s"run under the commit protocol $protocol " +
        s"(${SQLConf.FILE_COMMIT_PROTOCOL_CLASS.key}): its files are numbered by a job " +
        s"committer that only $CommitProtocol installs")
    }
    if (streaming) {
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
    // Version 2 would move each task's files into the folder at task commit: a failed job would
    // leave them there.
    conf.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1)
    Some(install(job, options, parsed, prepared, folder, dynamic = false, Nil))
  }

  /** Installs the job committer that counts the write's files, and says what it needs. */
  private def install(
      job: Job,
      options: Map[String, String],
      parsed: TFRecordOptions,
      schema: StructType,
      folder: Path,
      dynamic: Boolean,
      partitionColumns: Seq[String]): Prepared = {
    val conf = job.getConfiguration
    val writeId = UUID.randomUUID().toString
    conf.set(WriteIdKey, writeId)
    // Hadoop's committer keeps a job's files in _temporary/<application attempt> (0 unless set),
    // and removes all of _temporary at the end: two writes into one folder at once would each
    // lose the other's. A number of its own per write, and the committer's cleanupJob, which
    // removes only its own, let both commit.
    conf.setInt(MRJobConfig.APPLICATION_ATTEMPT_ID,
      (UUID.fromString(writeId)
        .getLeastSignificantBits & Int.MaxValue).toInt)
    conf.set(FolderKey, folder.toString)
    conf.set(SchemaKey, schema.json)
    conf.setBoolean(DynamicKey, dynamic)
    conf.set(PartitionsKey, Json.arr(partitionColumns.map(Json.str)).compact)
    conf.set(LockWaitKey,
      SQLConf.get.getConfString(TFRecordManifest.LockWaitKey,
        TFRecordManifest.DefaultLockWaitSeconds.toString))
    options.foreach { case (k, v) => conf.set(OptionsKey + k, v) }
    conf.setClass(SQLConf.OUTPUT_COMMITTER_CLASS.key, classOf[TFRecordShardCommitter],
      classOf[OutputCommitter])
    // The commit protocol loads the committer through the configuration's class loader, which
    // does not see a jar added to a running session (ADD JAR, addArtifacts): ours does.
    conf.setClassLoader(classOf[TFRecordShardCommitter].getClassLoader)
    Prepared(schema, writeId, requireValues = parsed.tfds.isDefined)
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
    for (g <- asGiven; e <- existing; where <- TFDSFeatures.difference(g, e)) {
      throw TFRecordError.argument(TFRecordError.TfdsFeatures,
        s"The features given differ from those of the dataset in $folder (its " +
          s"${TFDSDataset.FeaturesFile}): $where. A split is written with the dataset's features.")
    }
    val features = existing.orElse(asGiven).getOrElse(TFDSFeatures.fromSchema(dataSchema))
    TFDSFeatures.check(dataSchema, features)
  }

  /** The hidden file beside `data` holding its record count, for the write `writeId`. */
  def countFile(data: Path, writeId: String): Path =
    new Path(data.getParent, s"$CountPrefix$writeId-${data.getName}")

  /** Writes the count file of `data`: its records and its features' numbers of values. */
  def writeCount(
      data: Path,
      writeId: String,
      counts: TFRecordManifest.TaskCounts,
      conf: Configuration): Unit = {
    val file = countFile(data, writeId)
    val out = HadoopCompat.createNew(file, conf)
    try out.write(counts.text.getBytes(UTF_8))
    finally out.close()
  }

  /** The folder's manifest lock, taken at job commit before the files move into the folder. */
  def lock(conf: Configuration): Option[TFRecordManifest.Lock] = {
    val writeId = conf.get(WriteIdKey)
    if (writeId == null) return None
    val folder = new Path(conf.get(FolderKey))
    Some(TFRecordManifest.lock(folder.getFileSystem(conf), folder, writeId,
      conf.getLong(LockWaitKey, TFRecordManifest.DefaultLockWaitSeconds)))
  }

  /**
   * At job setup, before any task runs and after mode overwrite has emptied the folder: a
   * `shardPrefix` write numbers all the files of its prefix, so the folder must hold none yet.
   */
  def checkPrefixFree(conf: Configuration): Unit = {
    if (conf.get(WriteIdKey) == null) return
    val options = TFRecordOptions.sessionFree(HadoopCompat.propsWithPrefix(conf, OptionsKey))
    val folder = new Path(conf.get(FolderKey))
    val fs = folder.getFileSystem(conf)
    options.tfxSplit.foreach { split =>
      val dir = new Path(folder, tfxFolder(split))
      if (fs.exists(dir) && fs.listStatus(dir).nonEmpty) {
        throw TFRecordError.argument(TFRecordError.DatasetFolder,
          s"$folder already has the TFX split '$split' (${tfxFolder(split)}): write it into a " +
            "new artifact folder, or remove that folder first (mode overwrite empties the " +
            "artifact, its other splits too).")
      }
      return
    }
    val prefix = options.shardPrefix match {
      case Some(p) if options.tfds.isEmpty => p
      case _ => return
    }
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
  def finish(conf: Configuration, output: Path): Unit = {
    val writeId = conf.get(WriteIdKey)
    if (writeId == null) return
    val folder = new Path(conf.get(FolderKey))
    val options = TFRecordOptions.sessionFree(HadoopCompat.propsWithPrefix(conf, OptionsKey))
    val fs = folder.getFileSystem(conf)
    val mine = s"$CountPrefix$writeId-"
    val counts = countFiles(fs, output, mine).sortBy(_.getName)
    val files = counts.map(c => new Path(c.getParent, c.getName.substring(mine.length)))
    val tasks = counts.map(c =>
      TFRecordManifest.TaskCounts.parse(TFDSDataset.readText(c,
        conf).get))
    val records = tasks.map(_.records)
    val n = options.numShards.getOrElse(math.max(1, files.length))
    // What can be refused is refused before a file is renamed, and then this job's files go:
    // the folder is left as it was before the job.
    def refuse(why: String): Nothing = {
      (files ++ counts :+ new Path(output, "_SUCCESS")).foreach(fs.delete(_, false))
      throw new IOException(why)
    }
    if (files.length > n) {
      refuse(s"The write produced ${files.length} files, more than its " +
        s"${TFRecordOptions.NumShardsOption} $n: repartition the DataFrame to $n partitions " +
        "(spark_tfrecord.write, write_tfds and TFDS.write do).")
    }
    val lengths = records ++ Seq.fill(n - files.length)(0L)
    try {
      val placed = options.tfds match {
        case Some(name) =>
          // TFDS counts the bytes of the records' data, without their framing.
          val bytes = files.map(f => fs.getFileStatus(f).getLen).sum -
            TFRecordFraming.OverheadBytes * lengths.sum
          finishDataset(fs, folder, conf, options, name, files, lengths, bytes)
        case None if options.tfxSplit.isDefined =>
          val dir = new Path(folder, tfxFolder(options.tfxSplit.get))
          HadoopCompat.mkdirs(fs, dir)
          val names = shardNames(s"${dir.getName}/$TfxPrefix", n, options.compression)
          val placed = place(fs, folder, files, names, conf, options.compression)
          // Only the data files in the split's folder: not the local file system's checksums.
          fs match {
            case local: ChecksumFileSystem =>
              placed.foreach(p => local.getRawFileSystem.delete(local.getChecksumFile(p), false))
            case _ =>
          }
          placed
        case None if options.shardPrefix.isDefined =>
          val names = shardNames(options.shardPrefix.get, n, options.compression)
          names.find(name => fs.exists(new Path(folder, name))).foreach { name =>
            refuse(s"$folder already has a file $name (written meanwhile).")
          }
          place(fs, folder, files, names, conf, options.compression)
        case None if options.numShards.isDefined =>
          val ext = TFRecordWriter.Extension + options.compression.extension
          val empty = (files.length until n).map(i => f"part-$i%05d-$writeId-empty$ext")
          place(fs, output, files, files.map(_.getName) ++ empty, conf, options.compression)
        case None => files
      }
      // The files placed are this write's, in their order, then the shards of no record added.
      val entries = placed.zipWithIndex.map { case (p, i) =>
        p -> (if (i < tasks.length) tasks(i) else TFRecordManifest.TaskCounts(0, ValueCounts.None))
      }
      commitManifest(fs, folder, output, conf, options, entries)
    } finally counts.foreach(fs.delete(_, false))
  }

  /** The count files of this write under `output`, in it and in its partition folders. */
  private def countFiles(fs: FileSystem, output: Path, mine: String): Seq[Path] = {
    val found = Seq.newBuilder[Path]
    def walk(dir: Path): Unit = fs.listStatus(dir).foreach { s =>
      val name = s.getPath.getName
      if (s.isDirectory) { if (!TFRecordManifest.hidden(name)) walk(s.getPath) }
      else if (name.startsWith(mine)) found += s.getPath
    }
    if (fs.exists(output)) walk(output)
    found.result()
  }

  /**
   * Merges this write's files (`entries`, each with its task's counts, at their final names)
   * into the folder's manifest, or drops the manifest when the folder holds what it cannot count.
   */
  private def commitManifest(
      fs: FileSystem,
      folder: Path,
      output: Path,
      conf: Configuration,
      options: TFRecordOptions,
      entries: Seq[(Path, TFRecordManifest.TaskCounts)]): Unit = {
    val base = fs.makeQualified(output).toUri.getPath.stripSuffix("/") + "/"
    def relative(p: Path) = fs.makeQualified(p).toUri.getPath.stripPrefix(base)
    val schema = DataType.fromJson(conf.get(SchemaKey)).asInstanceOf[StructType]
    val counted = entries.map(_._2).filter(_.records > 0).map(_.counts)
    val counts = if (counted.isEmpty) ValueCounts.None
    else counted.reduce(TFRecordManifest.mergeCounts)
    val dynamic = conf.getBoolean(DynamicKey, false)
    // One listing gives every data file's size, this write's among them, but for a dynamic
    // partition overwrite, whose files are still in Spark's staging folder (`output`).
    val listed = TFRecordManifest.dataFiles(fs, folder)
    val sizes = if (dynamic) TFRecordManifest.dataFiles(fs, output) else listed
    val files = entries.map { case (p, t) =>
      val path = relative(p)
      TFRecordManifest.Entry(path, t.records,
        sizes.getOrElse(path, throw new IOException(s"$p is missing at job commit")),
        options.compression.name)
    }
    val partitions = JsonParser.parse(conf.get(PartitionsKey)).elements.map(_.text)
    val manifest = TFRecordManifest.Manifest(options.recordType.name, schema.toDDL, schema.json,
      partitions, files, counts)
    val replaced = if (dynamic) files.map(f => f.path.substring(0, f.path.lastIndexOf('/'))).toSet
    else Set.empty[String]
    val old = TFRecordManifest.read(folder, conf)
    TFRecordManifest.merge(old, manifest, replaced, listed) match {
      case Right(merged) => TFRecordManifest.write(fs, folder, merged)
      case Left(why) => TFRecordManifest.drop(fs, folder, why)
    }
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
      bytes: Long): Seq[Path] = {
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
    val placed = place(fs, folder, files, names, conf, TFRecordCompression.None)
    if (!fs.exists(new Path(folder, TFDSDataset.FeaturesFile))) {
      // The features as given (TFDS's own JSON, with what only TFDS uses: image formats, box
      // formats, descriptions), else those derived from the schema.
      val features = options.tfdsFeatures.getOrElse(TFDSFeatures.toJson(
        TFDSFeatures.fromSchema(DataType.fromJson(conf.get(SchemaKey)).asInstanceOf[StructType])))
      options.tfdsClassNames.foreach { json =>
        JsonParser.parse(json).fields.foreach { case (path, names) =>
          val text = names.elements.map(_.text).mkString("", "\n", "\n")
          TFDSDataset.writeAtomically(fs, new Path(folder, TFDSFeatures.labelsFile(path)), text)
        }
      }
      TFDSDataset.writeAtomically(fs, new Path(folder, TFDSDataset.FeaturesFile), features)
    }
    val written = TFDSDataset.Split(split, lengths, bytes, template)
    TFDSDataset.writeAtomically(fs, new Path(folder, TFDSDataset.InfoFile),
      info.withSplit(Some(written), split).text)
    placed
  }

  /**
   * Renames `files` to the first `names`, and writes the rest as files of no record; returns
   * the files' paths, the renamed ones first, in `files`' order.
   */
  private def place(
      fs: FileSystem,
      folder: Path,
      files: Seq[Path],
      names: Seq[String],
      conf: Configuration,
      compression: TFRecordCompression): Seq[Path] =
    names.indices.map { i =>
      val target = new Path(folder, names(i))
      if (i < files.length) {
        if (target != files(i)) {
          if (fs.exists(target)) fs.delete(target, false)
          if (!fs.rename(files(i), target)) {
            throw new IOException(s"Cannot rename ${files(i)} to $target")
          }
        }
      } else {
        new TFRecordWriter(target, conf, compression).close()
      }
      target
    }
}
