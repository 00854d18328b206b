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

import io.github.sparktfrecord.codec.TFRecordSchema
import io.github.sparktfrecord.framing.{IndexWriter, TFRecordReader}
import io.github.sparktfrecord.sql.{FailureSafeReader, TFRecordOptions}
import io.github.sparktfrecord.sql.{TFRecordOutputWriterFactory, TFRecordPlanningWarnings}
import io.github.sparktfrecord.sql.{TFRecordRows, TFRecordSchemaInferencer}
import io.github.sparktfrecord.tfds.{TFDSDataset, TFRecordShardedWrite, TFRecordShards}

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
    TFRecordShards.checkWrite(options, parsed)
    val sharded = TFRecordShardedWrite.prepare(job, options, parsed, dataSchema)
    TFRecordSchema.validate(sharded.map(_.schema).getOrElse(dataSchema), parsed.recordType,
      writing = true, parsed.pathSeparator, parsed.sparseVectors)
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
    FailureSafeReader.checkCorruptColumn(requiredSchema, parsed)
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
        TFRecordRows(reader, TFRecordRows.decoder(requiredSchema, parsed, path.toString), path)
      }
    }
  }
}
