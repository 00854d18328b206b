package io.github.sparktfrecord

// The errors of reading TFRecord files. The two public ones are what users catch (and what the
// Python CLI maps to its exit status); each names the file and the byte offset of the record.

/** A record whose framing is broken: what is wrong, in which file, at which byte offset. */
class TFRecordCorruptException(message: String, val path: String, val offset: Long)
  extends java.io.IOException(s"$message at byte offset $offset of $path")

/** A record whose framing is sound but whose content does not decode or does not fit the schema. */
class TFRecordDataException(message: String, val path: String, val offset: Long, cause: Throwable)
  extends RuntimeException(s"$message, in the record at byte offset $offset of $path", cause)

private[sparktfrecord] object TFRecordDataException {
  /** The record's bytes are not a valid (Sequence)Example. */
  def malformed(
      e: WireFormatException,
      sequence: Boolean,
      path: String,
      offset: Long): TFRecordDataException = {
    val message = if (sequence) "tf.train.SequenceExample" else "tf.train.Example"
    new TFRecordDataException(
      s"Malformed $message (${e.getMessage} at byte ${e.position} of the record)", path, offset, e)
  }
}

/** A value that does not fit its column (overflow, NaN into decimal, ...); gets context above. */
private[sparktfrecord] final class ValueOutOfRangeException(message: String)
  extends RuntimeException(message, null, false, false)

/** Malformed protobuf bytes; `position` is the offset inside the record's data. */
private[sparktfrecord] final class WireFormatException(message: String, val position: Int)
  extends RuntimeException(message)
