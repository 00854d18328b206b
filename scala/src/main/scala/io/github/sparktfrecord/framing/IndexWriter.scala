package io.github.sparktfrecord.framing

import java.io.OutputStream

import org.apache.hadoop.fs.Path

import io.github.sparktfrecord.TFRecordError

/**
 * Index files, as the `tfrecord` package (PyTorch) and NVIDIA DALI read them to shard a file
 * between workers: one line per record, `<offset> <size>\n` in ASCII decimal, the offset of the
 * record's header in the record stream and its framed size (header, data and footer).
 *
 * The index of a data file `dir/name` is `dir/_name.idx`: Spark's file listing skips names that
 * start with `_`, so a directory with indexes still reads as its data files only.
 *
 * Of compressed files only gzip ones have an index, of offsets in the uncompressed stream: what
 * the `tfrecord` package's `compression_type="gzip"` seeks to. DALI reads uncompressed files only.
 *
 * An index writer writes index lines without a String or an array per record, into a buffer of
 * its own (no synchronized call per line), handed to `out` 64 KiB at a time.
 */
private[sparktfrecord] final class IndexWriter(out: OutputStream) extends java.io.Closeable {
  private val buffer = new Array[Byte](1 << 16)
  private var used = 0

  def add(offset: Long, size: Long): Unit = {
    if (buffer.length - used < IndexWriter.MaxLineBytes) flush()
    used = decimal(offset, used)
    buffer(used) = ' '
    used = decimal(size, used + 1)
    buffer(used) = '\n'
    used += 1
  }

  /** Writes `value` (not negative) at `at`; returns where it ends. */
  private def decimal(value: Long, at: Int): Int = {
    var digits = 1
    var rest = value / 10
    while (rest > 0) {
      digits += 1
      rest /= 10
    }
    var v = value
    var i = at + digits
    while (i > at) {
      i -= 1
      buffer(i) = ('0' + (v % 10)).toByte
      v /= 10
    }
    at + digits
  }

  /** Writes the lines added so far to the stream. */
  def flush(): Unit = {
    out.write(buffer, 0, used)
    used = 0
  }

  override def close(): Unit = try flush()
  finally out.close()
}

private[sparktfrecord] object IndexWriter {
  final val Prefix = "_"
  final val Suffix = ".idx"

  /** The index of the data file `data`, beside it. */
  def pathFor(data: Path): Path = new Path(data.getParent, Prefix + data.getName + Suffix)

  /** Throws, naming the valid values, unless files of `compression` can have an index. */
  def checkCompression(compression: TFRecordCompression, what: => String): Unit =
    if (compression != TFRecordCompression.None && compression != TFRecordCompression.Gzip) {
      throw TFRecordError.argument(TFRecordError.InvalidOption,
        s"Cannot index $what (compression ${compression.name}): the readers that take an index " +
          "(the tfrecord package for PyTorch, NVIDIA DALI) read uncompressed TFRecord files, " +
          "and the tfrecord package gzip ones. Valid compressions with " +
          "'writeIndex': none, gzip.")
    }

  /** Two longs of at most 19 digits, a space and a newline. */
  final val MaxLineBytes = 40
}
