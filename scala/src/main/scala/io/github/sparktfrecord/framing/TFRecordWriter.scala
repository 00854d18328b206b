package io.github.sparktfrecord.framing

import java.io.{BufferedOutputStream, OutputStream}
import java.util.zip.CRC32C

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Writes framed records to a new file, compressed whole as asked, and with `index` its index
 * file ([[TFRecordIndex]]) beside it: what both the data source's [[TFRecordOutputWriter]] and
 * the Hadoop [[TFRecordOutputFormat]] write through. Both files are created in the task's
 * working directory, so the commit protocol commits or discards them together.
 */
private[sparktfrecord] final class TFRecordWriter(
    file: Path,
    conf: Configuration,
    compression: TFRecordCompression,
    index: Boolean = false) extends java.io.Closeable {

  private val out: OutputStream = {
    val raw = HadoopCompat.createNew(file, conf)
    new BufferedOutputStream(compression.compress(raw, conf), TFRecordWriter.BufferBytes)
  }
  private val indexWriter: IndexWriter =
    if (!index) null
    else {
      try new IndexWriter(HadoopCompat.createNew(IndexWriter.pathFor(file), conf))
      catch {
        case e: Throwable =>
          out.close()
          throw e
      }
    }
  /** Where the next record starts in the (uncompressed) record stream. */
  private var position = 0L

  /** Where the next record starts in the (uncompressed) record stream: for messages. */
  def nextRecordOffset: Long = position
  private val crc = new CRC32C
  private val copy = new RecordBuffer

  /**
   * Writes the record whose `length` data bytes already stand at `buffer[HeaderBytes, …)`,
   * framing it in place: `buffer` must have room for the footer after the data (a
   * [[RecordBuffer]] has).
   */
  def writeFramed(buffer: Array[Byte], length: Int): Unit = {
    val framed = TFRecordFraming.frame(crc, buffer, length)
    out.write(buffer, 0, framed)
    if (indexWriter != null) indexWriter.add(position, framed)
    position += framed
  }

  /** Writes `data[0, length)` as one record (copied once, to frame it). */
  def write(data: Array[Byte], length: Int): Unit = {
    val buffer = copy.reserve(length)
    System.arraycopy(data, 0, buffer, TFRecordFraming.HeaderBytes, length)
    writeFramed(buffer, length)
  }

  override def close(): Unit =
    try out.close()
    finally if (indexWriter != null) indexWriter.close()
}

private[sparktfrecord] object TFRecordWriter {
  final val BufferBytes = 1 << 16

  /** The extension of the files written, before the compression's (`.gz`, `.deflate`). */
  final val Extension = ".tfrecord"
}

/** A reused buffer for one record's data with room for its framing around it. */
private[sparktfrecord] final class RecordBuffer {
  /** The record's data goes at `[HeaderBytes, HeaderBytes + length)`. */
  var bytes: Array[Byte] = new Array[Byte](1 << 12)

  /** Makes room for `length` data bytes plus framing; returns [[bytes]]. */
  def reserve(length: Int): Array[Byte] = {
    val needed = TFRecordFraming.OverheadBytes + length
    if (bytes.length < needed) {
      val grown = math.min(bytes.length * 2L, Int.MaxValue - 8).toInt
      bytes = new Array[Byte](math.max(needed, grown))
    }
    bytes
  }
}
