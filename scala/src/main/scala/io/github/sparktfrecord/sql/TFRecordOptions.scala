package io.github.sparktfrecord.sql

import java.util.Locale

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import org.apache.spark.sql.catalyst.{DataSourceOptions, FileSourceOptions}
import org.apache.spark.sql.catalyst.util.{CaseInsensitiveMap, DropMalformedMode, FailFastMode}
import org.apache.spark.sql.catalyst.util.{ParseMode, PermissiveMode}
import org.apache.spark.sql.internal.SQLConf

import io.github.sparktfrecord.{SparkShims, TFRecordError}
import io.github.sparktfrecord.codec.{FeaturePaths, RecordType}
import io.github.sparktfrecord.framing.{FramingSettings, HadoopCompat, TFRecordCompression}
import io.github.sparktfrecord.framing.{TFRecordFraming, TFRecordReader}

/**
 * Every option of the `tfrecord` data source, parsed once from the case-insensitive option map.
 * A value that is not valid fails here, on the driver, before a job starts, naming the valid
 * values. Options this class does not know are ignored, as Spark's own file sources ignore them,
 * with one warning per query ([[TFRecordPlanningWarnings]]).
 *
 * The same options configure the Hadoop formats, read from a job's [[Configuration]] (see the
 * constructor that takes one).
 */
private[sparktfrecord] class TFRecordOptions(parameters: CaseInsensitiveMap[String])
  extends Serializable {
  import TFRecordOptions._

  def this(parameters: Map[String, String]) = this(CaseInsensitiveMap(parameters))

  /**
   * The options of a Hadoop job: every key that starts with `tfrecord.` (case-sensitive, as
   * Hadoop keys are), named by the rest (case-insensitive). Defaults that would come from a SQL
   * configuration are Spark's defaults: a MapReduce job has no session.
   */
  def this(conf: Configuration) = this(
    TFRecordOptions.overSessionFreeDefaults(
      HadoopCompat.propsWithPrefix(conf, TFRecordOptions.HadoopPrefix)))

  /**
   * `recordType`: what each record holds. `Example` (default): a `tf.train.Example`, one feature
   * per column. `SequenceExample`: a `tf.train.SequenceExample` (context features, and feature
   * lists for `array<array<…>>` columns). `ByteArray`: the raw record bytes in one binary column.
   * Spelled as in linkedin spark-tfrecord, matched case-insensitively.
   */
  val recordType: RecordType =
    oneOf(RecordTypeOption, RecordType.All, RecordType.Example)(_.name)

  /**
   * `inferSchemaMaxFiles`: how many files schema inference reads (default 32). When there are more,
   * it takes that many spread evenly over the files sorted by path. `-1`: every file.
   */
  val inferSchemaMaxFiles: Int = positiveOrAll(InferSchemaMaxFilesOption, 32)

  /** `inferSchemaMaxRecords`: records inference reads per file (default 1000); `-1`: all. */
  val inferSchemaMaxRecords: Int = positiveOrAll(InferSchemaMaxRecordsOption, 1000)

  /**
   * `maxRecordBytes`: a record whose length field is larger is refused with an error instead of
   * an allocation (default: the largest array the JVM allows).
   */
  val maxRecordBytes: Int = parameters.get(MaxRecordBytesOption) match {
    case None => DefaultMaxRecordBytes
    case Some(v) =>
      parseInt(MaxRecordBytesOption, v).filter(n => n > 0 && n <= DefaultMaxRecordBytes)
        .getOrElse(
          invalid(MaxRecordBytesOption, v, Seq(s"an integer from 1 to $DefaultMaxRecordBytes")))
  }

  /**
   * `allowNonTensorFlowCodec`: allow a `compression` / `codec` TensorFlow cannot read (snappy,
   * bzip2, lz4, zstd, any Hadoop codec class), for files only Spark will read (default false).
   */
  val allowNonTensorFlowCodec: Boolean =
    booleanOption(AllowNonTensorFlowCodecOption, default = false)

  /**
   * `compression` (alias `codec`, linkedin's option, which takes a Hadoop codec class name):
   * `none` (default), `gzip` or `deflate` (alias `zlib`), TensorFlow's GZIP and ZLIB. On write it
   * compresses each file whole and adds `.gz` / `.deflate` after `.tfrecord`; on read a file's
   * extension decides, and this option applies to files without one. A `tfxSplit` write's
   * default is `gzip`, as TFX's.
   */
  val compression: TFRecordCompression =
    Seq(CompressionOption, CodecOption).flatMap(o => parameters.get(o).map(o -> _)).headOption
      .map { case (o, v) => TFRecordCompression.parse(o, v, allowNonTensorFlowCodec) }
      .getOrElse(
        if (parameters.contains(TfxSplitOption)) TFRecordCompression.Gzip
        else TFRecordCompression.None)

  /**
   * `splitFiles`: let Spark split large uncompressed files between tasks (default true). A split
   * finds its first record by its header checksum; turn this off only for records whose payload
   * itself holds framed TFRecords and is larger than a split, which could pass for a header.
   */
  val splitFiles: Boolean = booleanOption(SplitFilesOption, default = true)

  /**
   * `mode`: what a read does with a record whose framing is sound but whose payload does not
   * decode or does not fit the schema. `FAILFAST` (default): fail, naming file, offset, column.
   * `DROPMALFORMED`: skip the record. `PERMISSIVE`: a row of nulls, with the record's bytes in
   * the `columnNameOfCorruptRecord` column when the schema has one (binary or string).
   */
  val mode: ParseMode = oneOf(ModeOption, ParseModes, FailFastMode)(_.name)

  /** `columnNameOfCorruptRecord`: default `spark.sql.columnNameOfCorruptRecord`. */
  val columnNameOfCorruptRecord: String = parameters.getOrElse(ColumnNameOfCorruptRecordOption,
    SQLConf.get.columnNameOfCorruptRecord)

  /** `ignoreCorruptFiles`: also honoured by schema inference (default: the SQL conf). */
  val ignoreCorruptFiles: Boolean =
    booleanOption(IgnoreCorruptFilesOption, default = SQLConf.get.ignoreCorruptFiles)

  /** `ignoreMissingFiles`: also honoured by schema inference (default: the SQL conf). */
  val ignoreMissingFiles: Boolean =
    booleanOption(IgnoreMissingFilesOption, default = SQLConf.get.ignoreMissingFiles)

  /** `verifyChecksums`: check the data CRC of every record on read (default true). */
  val verifyChecksums: Boolean = booleanOption(VerifyChecksumsOption, default = true)

  /**
   * `writeIndex`: each write task also writes the index of every file it writes, beside it as
   * `_<file name>.idx`, in the format the `tfrecord` package (PyTorch) and NVIDIA DALI read
   * (default false). See [[TFRecordIndex]]; with `compression` none or gzip only.
   */
  val writeIndex: Boolean = booleanOption(WriteIndexOption, default = false)

  /**
   * `pathSeparator`: what joins the field names of a struct column's path into a feature name
   * (default `/`, TensorFlow's convention: `image/object/bbox/xmin`). See [[FeaturePaths]].
   */
  val pathSeparator: String = parameters.get(PathSeparatorOption) match {
    case None => DefaultPathSeparator
    case Some(v) if v.nonEmpty => v
    case Some(v) => invalid(PathSeparatorOption, v, Seq("a non-empty string (default /)"))
  }

  /**
   * `inferNesting`: schema inference turns path-like feature names into struct columns,
   * `image/height` into `image struct<height …>` (default false: one column per feature).
   */
  val inferNesting: Boolean = booleanOption(InferNestingOption, default = false)

  /**
   * `split`: on read, the split of a TensorFlow Datasets folder to read (its shards only, with
   * the schema of its `features.json`); on write with `tfds`, the split written. See
   * [[TFDSDataset]].
   */
  val split: Option[String] = parameters.get(SplitOption).map { v =>
    if (v.isEmpty || !v.forall(c => c.isLetterOrDigit || c == '_')) {
      invalid(SplitOption, v, Seq("a split name of letters, digits and _ (train, test)"))
    }
    v
  }

  /**
   * `tfds`: write a TensorFlow Datasets dataset of this name into the save path (its version
   * folder), with `split`: shards named by TFDS's template and `dataset_info.json` written at
   * job commit. `write_tfds` and `TFDS.write` set it, and the options below.
   */
  val tfds: Option[String] = parameters.get(TfdsOption).map { v =>
    if (!v.matches("[a-zA-Z][a-zA-Z0-9_]*")) {
      invalid(TfdsOption, v,
        Seq("a dataset name: a letter, then letters, digits and _ " +
          "(my_dataset), as tfds.load takes it"))
    }
    v
  }

  /** `tfdsVersion`: the version recorded in `dataset_info.json` (default 1.0.0). */
  val tfdsVersion: String = parameters.getOrElse(TfdsVersionOption, "1.0.0") match {
    case v @ VersionPattern() => v
    case v => invalid(TfdsVersionOption, v, Seq("a version MAJOR.MINOR.PATCH (1.0.0)"))
  }

  /**
   * `tfdsFeatures`: the dataset's features, as the JSON of a TFDS feature connector
   * (`features.json`, or `FeaturesDict.to_json()`). Default: those already in the folder, else
   * the ones derived from the schema.
   */
  val tfdsFeatures: Option[String] = parameters.get(TfdsFeaturesOption)

  /** `tfdsClassNames`: a JSON object of ClassLabel feature paths to their class names. */
  val tfdsClassNames: Option[String] = parameters.get(TfdsClassNamesOption)

  /** `tfdsMode`: `error` (default): refuse a split that exists; `overwrite`: replace it. */
  val tfdsMode: String = oneOf(TfdsModeOption, Seq("error", "overwrite"), "error")(identity)

  /**
   * `numShards`: the number of files (shards) the write ends with: write tasks beyond it fail
   * the job; missing ones are written empty. With the session extensions the rows are also
   * arranged so that the files' record counts differ by at most one (`TFRecordShardsRule`).
   * Default: one per write task.
   */
  val numShards: Option[Int] = parameters.get(NumShardsOption).map { v =>
    parseInt(NumShardsOption, v).filter(n => n > 0 && n <= 99999)
      .getOrElse(invalid(NumShardsOption, v, Seq("an integer from 1 to 99999")))
  }

  /**
   * `shuffleSeed`: with `numShards`, the rows dealt to the files in an order that depends only
   * on this seed and the rows (a 64-bit integer). Needs the session extensions, which arrange
   * the rows before the write.
   */
  val shuffleSeed: Option[Long] = parameters.get(ShuffleSeedOption).map { v =>
    val seed = try v.trim.toLong
    catch {
      case _: NumberFormatException =>
        invalid(ShuffleSeedOption, v,
          Seq("a 64-bit integer (-9223372036854775808 to " +
            "9223372036854775807), with numShards"))
    }
    if (numShards.isEmpty) {
      invalid(ShuffleSeedOption, v,
        Seq(s"a 64-bit integer, with $NumShardsOption (it orders " +
          s"the rows of the $NumShardsOption files)"))
    }
    seed
  }

  /**
   * `tfxSplit`: write the split of a TFX Examples artifact whose folder is the save path:
   * `Split-<split>/data_tfrecord-00000-of-00004.gz`, GZIP, numbered at job commit, with nothing
   * else in the split's folder (what TFX's ExampleGen writes, and its components glob).
   */
  val tfxSplit: Option[String] = parameters.get(TfxSplitOption).map { v =>
    if (v.isEmpty || !v.forall(c => c.isLetterOrDigit || c == '_' || c == '-')) {
      invalid(TfxSplitOption, v, Seq("a split name of letters, digits, _ and - (train, eval)"))
    }
    v
  }

  /**
   * `shardPrefix`: name the files of a write `<prefix>-00000-of-00016` (TensorFlow's sharded
   * names, which `tf.data` and TFX users glob), numbered at job commit.
   */
  val shardPrefix: Option[String] = parameters.get(ShardPrefixOption).map { v =>
    if (v.isEmpty || v.contains('/') || v.startsWith("_") || v.startsWith(".")) {
      invalid(ShardPrefixOption, v,
        Seq("a file name prefix without / that does not start " +
          "with _ or . (train)"))
    }
    v
  }

  /**
   * `decoder`: how records are decoded into rows. `generated` (default): `Example` records laid
   * out the usual way (as TensorFlow writes them) are read by the fast path, a reader per column
   * chosen once per schema, and any other record by the general path, which reads any layout and
   * SequenceExample records. `interpreted`: every record by the general path, which reads the
   * same rows and fails on the same records with the same errors. The values keep the names they
   * had when the fast path was generated code.
   */
  val fastPath: Boolean =
    oneOf(DecoderOption, Seq(GeneratedDecoder, InterpretedDecoder), GeneratedDecoder)(identity) ==
      GeneratedDecoder

  /**
   * `vectorLayout`: how a write lays out Spark ML vector columns. `dense` (default): one
   * `float_list` of every value. `sparse`: `tf.io.SparseFeature`'s layout, three features per
   * vector column `c`: `c/indices` (int64, the stored or non-zero positions, increasing),
   * `c/values` (float) and `c/size` (int64, one value), joined with `pathSeparator`. A read
   * takes either layout, whatever this option says.
   */
  val sparseVectors: Boolean =
    oneOf(VectorLayoutOption, Seq(DenseVectors, SparseVectors), DenseVectors)(identity) ==
      SparseVectors

  /** The value of `values` named (case-insensitively) by option `name`, or `default`. */
  private def oneOf[T](name: String, values: Seq[T], default: T)(valueName: T => String): T =
    parameters.get(name) match {
      case None => default
      case Some(v) => values.find(valueName(_).equalsIgnoreCase(v.trim)).getOrElse(
          invalid(name, v, values.map(valueName)))
    }

  private def positiveOrAll(name: String, default: Int): Int = parameters.get(name) match {
    case None => default
    case Some(v) => parseInt(name, v) match {
        case Some(-1) => Int.MaxValue
        case Some(n) if n > 0 => n
        case _ => invalid(name, v, Seq("a positive integer", "-1 (no limit)"))
      }
  }

  /**
   * Whether `path` may be read in splits: unless `splitFiles` is off, when its framing can be
   * ([[TFRecordReader.isSplittable]]).
   */
  def isSplittable(path: Path, conf: Configuration): Boolean =
    splitFiles && TFRecordReader.isSplittable(path, compression, conf)

  /** What a framing reader opens with, for a reader that keeps each record's data or not. */
  def framing(keepData: Boolean): FramingSettings =
    FramingSettings(compression, maxRecordBytes, verifyChecksums, keepData)

  private def booleanOption(name: String, default: => Boolean): Boolean =
    parameters.get(name) match {
      case None => default
      case Some(v) => v.trim.toLowerCase(Locale.ROOT) match {
          case "true" => true
          case "false" => false
          case _ => invalid(name, v, Seq("true", "false"))
        }
    }

  private def parseInt(name: String, v: String): Option[Int] =
    try Some(v.trim.toInt)
    catch { case _: NumberFormatException => None }
}

/**
 * The options' names, declared as Spark declares its sources' options (`AvroOptions`,
 * `JSONOptions`): `getAllOptions` lists them, and docs/options.md has one row for each (a unit
 * test checks).
 */
private[sparktfrecord] object TFRecordOptions extends DataSourceOptions {
  // Spark's names for the two options every file source shares.
  final val IgnoreCorruptFilesOption = newOption(FileSourceOptions.IGNORE_CORRUPT_FILES)
  final val IgnoreMissingFilesOption = newOption(FileSourceOptions.IGNORE_MISSING_FILES)
  final val RecordTypeOption = newOption("recordType")
  final val InferSchemaMaxFilesOption = newOption("inferSchemaMaxFiles")
  final val InferSchemaMaxRecordsOption = newOption("inferSchemaMaxRecords")
  final val MaxRecordBytesOption = newOption("maxRecordBytes")
  final val VerifyChecksumsOption = newOption("verifyChecksums")
  final val CompressionOption = "compression"
  final val SplitFilesOption = newOption("splitFiles")
  final val ModeOption = newOption("mode")
  final val ColumnNameOfCorruptRecordOption = newOption("columnNameOfCorruptRecord")
  final val CodecOption = "codec"
  // linkedin's spark-tfrecord calls it codec: either name works, as for Spark's own sources.
  newOption(CompressionOption, CodecOption)
  final val AllowNonTensorFlowCodecOption = newOption("allowNonTensorFlowCodec")
  final val WriteIndexOption = newOption("writeIndex")
  final val PathSeparatorOption = newOption("pathSeparator")
  final val InferNestingOption = newOption("inferNesting")
  final val DefaultPathSeparator = FeaturePaths.DefaultSeparator
  final val SplitOption = newOption("split")
  final val TfdsOption = newOption("tfds")
  final val TfdsVersionOption = newOption("tfdsVersion")
  final val TfdsFeaturesOption = newOption("tfdsFeatures")
  final val TfdsClassNamesOption = newOption("tfdsClassNames")
  final val TfdsModeOption = newOption("tfdsMode")
  final val NumShardsOption = newOption("numShards")
  final val ShuffleSeedOption = newOption("shuffleSeed")
  final val ShardPrefixOption = newOption("shardPrefix")
  final val TfxSplitOption = newOption("tfxSplit")
  final val DecoderOption = newOption("decoder")
  final val GeneratedDecoder = "generated"
  final val InterpretedDecoder = "interpreted"
  final val VectorLayoutOption = newOption("vectorLayout")
  final val DenseVectors = "dense"
  final val SparseVectors = "sparse"
  private val VersionPattern = """\d+\.\d+\.\d+""".r

  /** Every option's name, as docs/options.md spells it, sorted case-insensitively. */
  lazy val Names: Seq[String] = getAllOptions.toSeq.sortBy(_.toLowerCase(Locale.ROOT))

  /** The prefix of the options in a Hadoop job's configuration. */
  final val HadoopPrefix = "tfrecord."

  /**
   * Spark's defaults of the options that otherwise come from the session's SQL configuration,
   * for readers outside a session (the Hadoop formats, `inspect`), where it is not worth making.
   */
  val SessionFreeDefaults: Map[String, String] = Map(
    IgnoreCorruptFilesOption -> "false",
    IgnoreMissingFilesOption -> "false",
    ColumnNameOfCorruptRecordOption -> "_corrupt_record")

  /** Options given to a tool outside a Spark session, over [[SessionFreeDefaults]]. */
  def sessionFree(options: java.util.Map[String, String]): TFRecordOptions =
    new TFRecordOptions(overSessionFreeDefaults(options))

  private def overSessionFreeDefaults(
      options: java.util.Map[String, String]): CaseInsensitiveMap[String] = {
    import SparkShims.Converters._
    // Each option replaces a default spelled in another case.
    options.asScala.foldLeft(CaseInsensitiveMap(SessionFreeDefaults))(_ + _)
  }

  /** The `mode` option's values, spelled as Spark's JSON and CSV sources spell them. */
  val ParseModes: Seq[ParseMode] = Seq(FailFastMode, PermissiveMode, DropMalformedMode)

  final val DefaultMaxRecordBytes: Int = TFRecordFraming.MaxRecordBytes

  def invalid(option: String, value: String, valid: Seq[String]): Nothing =
    throw TFRecordError.invalidOption(option, value, valid)
}
