package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.hadoop.mapreduce.Job

import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.execution.datasources.{FileFormat, OutputWriterFactory, PartitionedFile}
import org.apache.spark.sql.sources.{DataSourceRegister, Filter}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.util.SerializableConfiguration

/**
 * The `tfrecord` data source: TensorFlow TFRecord files of `tf.train.Example` records (or
 * `SequenceExample`, or raw bytes), read and written as a Spark [[FileFormat]], so that column
 * pruning, partition discovery, `partitionBy`, save modes and the commit protocol all work.
 *
 * {{{
 *   spark.read.format("tfrecord").load(path)
 *   df.write.format("tfrecord").partitionBy("day").save(path)
 * }}}
 * Options are listed in [[TFRecordOptions]].
 */
class TFRecordFileFormat extends FileFormat with DataSourceRegister with Serializable {

  override def shortName(): String = "tfrecord"

  override def toString: String = "TFRecord"

  override def hashCode(): Int = getClass.hashCode()

  override def equals(other: Any): Boolean = other.isInstanceOf[TFRecordFileFormat]

  override def inferSchema(
      sparkSession: SparkSession,
      options: Map[String, String],
      files: Seq[FileStatus]): Option[StructType] = {
    val parsed = new TFRecordOptions(options)
    val conf = SparkShims.hadoopConf(sparkSession, options)
    TFDSDataset.schema(files, parsed, conf)
      .orElse(Some(TFRecordSchemaInferencer.infer(files, parsed, conf)))
  }

  override def supportDataType(dataType: DataType): Boolean =
    TFRecordSchema.supportsOrExplains(dataType)

  /** See [[TFRecordOptions.isSplittable]]. */
  override def isSplitable(
      sparkSession: SparkSession,
      options: Map[String, String],
      path: Path): Boolean = {
    // Spark asks once per file: the configuration (for Hadoop codec lookup) is made once.
    if (codecConf == null) codecConf = SparkShims.hadoopConf(sparkSession, options)
    new TFRecordOptions(options).isSplittable(path, codecConf)
  }

  @transient private var codecConf: Configuration = _

  override def prepareWrite(
      sparkSession: SparkSession,
      job: Job,
      options: Map[String, String],
      dataSchema: StructType): OutputWriterFactory = {
    val parsed = new TFRecordOptions(options)
    TFRecordPlanningWarnings.unknownOptions(sparkSession, options)
    TFRecordSchema.rejectMaps(dataSchema, parsed.recordType)
    val sharded = TFRecordShardedWrite.prepare(job, options, parsed, dataSchema)
    TFRecordSchema.validate(sharded.map(_.schema).getOrElse(dataSchema), parsed.recordType,
      writing = true, parsed.pathSeparator)
    if (parsed.writeIndex) {
      IndexWriter.checkCompression(parsed.compression, "the files of this write")
    }
    new TFRecordOutputWriterFactory(parsed, sharded)
  }

  /**
   * Our rows are already `UnsafeRow`s of the required schema: without partition columns they are
   * returned as they are, instead of being copied by the generic projection.
   */
  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] =
    if (partitionSchema.isEmpty) {
      buildReader(sparkSession, dataSchema, partitionSchema, requiredSchema, filters, options,
        hadoopConf)
    } else {
      super.buildReaderWithPartitionValues(sparkSession, dataSchema, partitionSchema,
        requiredSchema, filters, options, hadoopConf)
    }

  override def buildReader(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    val parsed = new TFRecordOptions(options)
    TFRecordPlanningWarnings.unknownOptions(sparkSession, options)
    TFRecordSchema.rejectMaps(dataSchema, parsed.recordType)
    TFRecordSchema.validate(requiredSchema, parsed.recordType, writing = false,
      parsed.pathSeparator)
    TFRecordPlanningWarnings.absentColumns(sparkSession, requiredSchema, options, parsed,
      hadoopConf)
    FailureSafeDecoder.checkCorruptColumn(requiredSchema, parsed)
    // Spark's own wrapper: a class of ours would be deserialized by the broadcast's class loader,
    // which differs from the task's when the jar came with `ADD JAR` or `addArtifacts`.
    val conf = sparkSession.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))

    // Without a column to fill (count()), records are checked but their data is never copied.
    val framing = parsed.framing(keepData = requiredSchema.nonEmpty)
    val split = parsed.split
    // Per task, the shard names of each TFDS folder read (from its dataset_info.json).
    val splitShards = new java.util.HashMap[Path, Set[String]]()

    (file: PartitionedFile) => {
      val path = new Path(file.filePath.toUri)
      val hadoopConf = conf.value.value
      if (split.isEmpty && TFDSDataset.isMetadata(path)) {
        throw TFDSDataset.splitNeeded(path.getParent, hadoopConf)
      }
      // With a split, a file that is not one of its shards (metadata, another split's shard,
      // anything else) is not opened.
      if (split.isDefined && !splitShards.computeIfAbsent(path.getParent,
          folder => TFDSDataset.shardNames(folder, split.get, hadoopConf)).contains(path.getName)) {
        Iterator.empty
      } else {
        val reader = TFRecordReader.openPart(
          path, hadoopConf, framing, file.start, file.length, file.fileSize)
        Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => reader.close()))
        TFRecordFileFormat.rows(reader,
          TFRecordFileFormat.decoder(requiredSchema, parsed, path.toString), path)
      }
    }
  }
}

private[sparktfrecord] object TFRecordFileFormat {
  private val EmptyRow = new UnsafeRow(0)
  EmptyRow.pointTo(new Array[Byte](8), 0)

  /** The rows `decode` makes of the records of `path`, closing its reader at the end. */
  def rows(reader: TFRecordReader, decode: TFRecordReader => InternalRow, path: Path)
      : Iterator[InternalRow] =
    new Iterator[InternalRow] {
      private var row: InternalRow = _
      private var done = false

      override def hasNext: Boolean = {
        // DROPMALFORMED decodes a bad record to null: keep reading.
        while (row == null && !done) {
          if (reader.next()) row = decode(reader)
          else { done = true; reader.close() }
        }
        row != null
      }

      override def next(): InternalRow = {
        if (!hasNext) throw new NoSuchElementException("end of " + path)
        val r = row
        row = null
        r
      }
    }

  /**
   * Turns the reader's current record into a row of `schema` (null: drop it); chosen once per
   * file. Records whose payload does not decode or fit are handled by the `mode` option
   * ([[FailureSafeDecoder]]).
   */
  def decoder(
      schema: StructType,
      options: TFRecordOptions,
      path: String): TFRecordReader => InternalRow =
    if (schema.isEmpty) {
      // count() and friends: the framing is walked (and checked), the records are never parsed.
      _ => EmptyRow
    } else options.recordType match {
      case RecordType.ByteArray =>
        val writer = new UnsafeRowWriter(1, 64)
        reader => {
          writer.reset()
          writer.zeroOutNullBytes()
          writer.write(0, reader.data, reader.dataStart, reader.length)
          writer.getRow
        }
      case recordType if FeaturePaths.isNested(schema) =>
        nestedDecoder(schema, recordType, options, path)
      case recordType =>
        val deserializer = ExampleDecoderGenerator.decoder(schema, recordType, path,
          FailureSafeDecoder.corruptColumn(schema, schema, options), null,
          options.generatedDecoder, options.generatedDecoderRequired)
        FailureSafeDecoder(options.mode,
          new FailureSafeDecoder.RecordDecoder {
            def decode(buf: Array[Byte], start: Int, end: Int, offset: Long): InternalRow =
              deserializer.deserialize(buf, start, end, offset)
            def corruptRow(buf: Array[Byte], start: Int, end: Int, offset: Long): InternalRow =
              deserializer.corruptRow(buf, start, end)
          })
    }

  /**
   * A nested schema ([[FeaturePaths]]): its features are decoded as a flat row, which
   * [[NestedRowAssembler]] turns into the row of `schema`. Kept apart from the flat decoder, whose
   * per-record path stays as short as it was.
   */
  private def nestedDecoder(
      schema: StructType,
      recordType: RecordType,
      options: TFRecordOptions,
      path: String): TFRecordReader => InternalRow = {
    val leaves = FeaturePaths.leaves(schema, recordType, options.pathSeparator)
    val flatSchema = FeaturePaths.flatSchema(leaves)
    val deserializer = ExampleDecoderGenerator.decoder(flatSchema, recordType, path,
      FailureSafeDecoder.corruptColumn(schema, flatSchema, options), leaves.map(_.column).toArray,
      options.generatedDecoder, options.generatedDecoderRequired)
    val assembler = new NestedRowAssembler(schema, leaves, recordType, path)
    FailureSafeDecoder(options.mode,
      new FailureSafeDecoder.RecordDecoder {
        def decode(buf: Array[Byte], start: Int, end: Int, offset: Long): InternalRow =
          assembler.assemble(deserializer.deserialize(buf, start, end, offset), offset)
        def corruptRow(buf: Array[Byte], start: Int, end: Int, offset: Long): InternalRow =
          assembler.assemble(deserializer.corruptRow(buf, start, end), offset)
      })
  }
}
