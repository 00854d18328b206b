package io.github.sparktfrecord

// The errors of this source. Each is a SparkThrowable with an error condition of its own (the
// list is in TFRecordError below and in docs/errors.md) and message parameters that carry the
// file, the byte offset and the column where they are known; the message is the readable text,
// after the condition in brackets as Spark writes its own. Users and the Python CLI match on
// the condition, never on the text.

/**
 * An error of this source: a Spark error condition (`getCondition` on Spark 4, `getErrorClass`
 * on 3.5), its SQLSTATE and its message parameters. The conditions are the constants of the
 * companion object.
 */
trait TFRecordError extends SparkThrowableShim {
  /** The error condition, such as `TFRECORD_CORRUPT_RECORD.TRUNCATED`. */
  def condition: String
  /** The values of the message: `path`, `offset`, `column`, ... and `reason`, its own text. */
  def parameters: Map[String, String]
  override def getSqlState: String = TFRecordError.sqlState(condition)
  override def getMessageParameters: java.util.Map[String, String] = {
    val map = new java.util.LinkedHashMap[String, String]()
    parameters.foreach { case (k, v) => map.put(k, v) }
    map
  }
}

/** The conditions of [[TFRecordError]], as docs/errors.md lists them. */
object TFRecordError {
  /** A record whose framing is broken; the sub-condition says how. */
  val CorruptRecord = "TFRECORD_CORRUPT_RECORD"
  /** The stream ends inside a record's header, data or footer. */
  val Truncated = s"$CorruptRecord.TRUNCATED"
  /** The masked CRC32C of a record's length does not match. */
  val LengthChecksum = s"$CorruptRecord.LENGTH_CHECKSUM"
  /** The masked CRC32C of a record's data does not match. */
  val DataChecksum = s"$CorruptRecord.DATA_CHECKSUM"
  /** The bytes could not be read or decompressed (the file system's or codec's reason). */
  val Unreadable = s"$CorruptRecord.UNREADABLE"
  /** A record longer than `maxRecordBytes` (read), or a row too large for one record (write). */
  val RecordTooLarge = "TFRECORD_RECORD_TOO_LARGE"
  /** A record whose framing is sound but whose bytes are not a (Sequence)Example. */
  val MalformedRecord = "TFRECORD_MALFORMED_RECORD"
  /** A value that does not fit its column: the wrong kind, too many values, out of range. */
  val DataMismatch = "TFRECORD_DATA_MISMATCH"
  /** An option with a value it cannot take, or options that cannot go together. */
  val InvalidOption = "TFRECORD_INVALID_OPTION"
  /** A column of a type the record type cannot hold. */
  val UnsupportedType = "TFRECORD_UNSUPPORTED_TYPE"
  /** A schema that does not fit the record type or the features: missing, extra or clashing. */
  val InvalidSchema = "TFRECORD_INVALID_SCHEMA"
  /** Records from which no schema can be inferred: give it with `.schema(...)`. */
  val CannotInferSchema = "TFRECORD_CANNOT_INFER_SCHEMA"
  /** TensorFlow Datasets features that are invalid, unsupported, or do not fit the DataFrame. */
  val TfdsFeatures = "TFRECORD_TFDS_FEATURES"
  /** A folder (a TensorFlow Datasets dataset, sharded output) not as the read or write needs. */
  val DatasetFolder = "TFRECORD_DATASET_FOLDER"

  /** Every condition, main ones and sub-conditions, for docs and tests. */
  val All: Seq[String] = Seq(Truncated, LengthChecksum, DataChecksum, Unreadable,
    RecordTooLarge, MalformedRecord, DataMismatch, InvalidOption, UnsupportedType, InvalidSchema,
    CannotInferSchema, TfdsFeatures, DatasetFolder)

  // The SQLSTATEs of the Spark conditions closest to each, so that tools grouping errors by
  // class (22: data exception, 42: syntax or access rule, 0A: not supported) put them right.
  private val SqlStates = Map(
    CorruptRecord -> "KD000", // datasource-specific errors (Spark's FAILED_READ_FILE is KD001)
    RecordTooLarge -> "54000", // program limit exceeded
    MalformedRecord -> "22023", // as Spark's MALFORMED_RECORD_IN_PARSING
    DataMismatch -> "22000", // data exception
    InvalidOption -> "42K06", // as Spark's INVALID_OPTIONS
    UnsupportedType -> "0A000", // as Spark's UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE
    InvalidSchema -> "42000",
    CannotInferSchema -> "42KD9", // as Spark's UNABLE_TO_INFER_SCHEMA
    TfdsFeatures -> "42000",
    DatasetFolder -> "42000")

  /** The SQLSTATE of a condition or of its main condition. */
  def sqlState(condition: String): String =
    SqlStates.getOrElse(condition.takeWhile(_ != '.'), "KD000")

  /** `[CONDITION] message`, the form of Spark's own messages. */
  private[sparktfrecord] def format(condition: String, message: String): String =
    s"[$condition] $message"

  /** A usage error (option, type, schema, folder) with `reason` as its message. */
  private[sparktfrecord] def argument(
      condition: String,
      reason: String,
      parameters: (String, String)*): TFRecordArgumentException =
    new TFRecordArgumentException(condition, reason, parameters.toMap + ("reason" -> reason))

  /** An option's value that is not one of `valid` (values, or a sentence saying which). */
  private[sparktfrecord] def invalidOption(
      option: String,
      value: String,
      valid: Seq[String]): TFRecordArgumentException =
    argument(InvalidOption,
      s"Invalid value '$value' for TFRecord option '$option'. " +
        s"Valid values: ${valid.mkString(", ")}.",
      "option" -> option, "value" -> value, "valid" -> valid.mkString(", "))

  /** A column's value that does not fit, on write: no file or offset to name. */
  private[sparktfrecord] def writeError(
      condition: String,
      column: String,
      reason: String): TFRecordDataException =
    new TFRecordDataException(condition, reason, null, -1L, column, null)
}

/**
 * A record whose framing is broken: what is wrong, in which file, at which byte offset
 * (conditions `TFRECORD_CORRUPT_RECORD.*` and `TFRECORD_RECORD_TOO_LARGE`).
 */
class TFRecordCorruptException private[sparktfrecord] (
    val condition: String,
    reason: String,
    val path: String,
    val offset: Long)
  extends java.io.IOException(
    TFRecordError.format(condition, s"$reason at byte offset $offset of $path"))
  with TFRecordError {
  override def parameters: Map[String, String] =
    Map("reason" -> reason, "path" -> path, "offset" -> offset.toString)
}

/**
 * A record whose framing is sound but whose content does not decode or does not fit the schema
 * (`TFRECORD_MALFORMED_RECORD`, `TFRECORD_DATA_MISMATCH`), on read with the file and the
 * record's offset; or, on write, a value that TFRecord cannot hold, with the column.
 */
class TFRecordDataException private[sparktfrecord] (
    val condition: String,
    reason: String,
    val path: String,
    val offset: Long,
    val column: String,
    cause: Throwable)
  extends RuntimeException(
    TFRecordError.format(condition,
      if (path == null) reason else s"$reason, in the record at byte offset $offset of $path"),
    cause)
  with TFRecordError {
  override def parameters: Map[String, String] = {
    val where = if (path == null) Map.empty[String, String]
    else Map("path" -> path, "offset" -> offset.toString)
    where ++ Option(column).map("column" -> _) + ("reason" -> reason)
  }

  /**
   * This write error, said of the record at `offset` of `path` (where the row's would start),
   * the place following the reason's last sentence.
   */
  private[sparktfrecord] def at(path: String, offset: Long): TFRecordDataException =
    new TFRecordDataException(condition, reason.stripSuffix("."), path, offset, column, getCause)
}

private[sparktfrecord] object TFRecordDataException {
  /**
   * The record's bytes are not a valid (Sequence)Example: `e` names a position in the buffer
   * whose record starts at `recordStart`.
   */
  def malformed(
      e: WireFormatException,
      sequence: Boolean,
      path: String,
      offset: Long,
      recordStart: Int): TFRecordDataException = {
    val message = if (sequence) "tf.train.SequenceExample" else "tf.train.Example"
    val at = e.position - recordStart
    new TFRecordDataException(TFRecordError.MalformedRecord,
      s"Malformed $message (${e.getMessage} at byte $at of the record)", path, offset,
      null, e)
  }

  /** A value of `column` in the record at `offset` of `path` that does not fit the column. */
  def mismatch(column: String, reason: String, path: String, offset: Long): TFRecordDataException =
    new TFRecordDataException(TFRecordError.DataMismatch, reason, path, offset, column, null)
}

/**
 * A usage error found before any data is read or written: an option's value, a column's type, a
 * schema, a TensorFlow Datasets folder (`TFRECORD_INVALID_OPTION`, `TFRECORD_UNSUPPORTED_TYPE`,
 * `TFRECORD_INVALID_SCHEMA`, `TFRECORD_CANNOT_INFER_SCHEMA`, `TFRECORD_TFDS_FEATURES`,
 * `TFRECORD_DATASET_FOLDER`). An `IllegalArgumentException`, as
 * before, so that PySpark raises its `IllegalArgumentException` with the condition.
 */
class TFRecordArgumentException private[sparktfrecord] (
    val condition: String,
    reason: String,
    override val parameters: Map[String, String])
  extends IllegalArgumentException(TFRecordError.format(condition, reason))
  with TFRecordError

/** A value that does not fit its column (overflow, NaN into decimal, ...); gets context above. */
private[sparktfrecord] final class ValueOutOfRangeException(message: String)
  extends RuntimeException(message, null, false, false)

/** Malformed protobuf bytes; `position` is the offset inside the record's data. */
private[sparktfrecord] final class WireFormatException(message: String, val position: Int)
  extends RuntimeException(message)
