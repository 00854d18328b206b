package io.github.sparktfrecord.framing

import java.io.{ByteArrayInputStream, EOFException, InputStream, SequenceInputStream}
import java.util.zip.CRC32C

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path}

import io.github.sparktfrecord.{TFRecordCorruptException, TFRecordError}
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Reads the framed records of one TFRecord stream into one reused buffer.
 *
 * After [[next]] returns true, the record's data is `data[dataStart, dataStart + length)` and its
 * header started at file offset `offset`. The data is not copied out of the stream's buffer: the
 * buffer grows to hold a whole record when one is larger, so a decoder copies each value once,
 * from the bytes read from the file into its row. A clean end of stream is only allowed at a
 * record boundary: a partial header or body is a truncated record, a checksum mismatch a corrupt
 * one, and both name the file and the byte offset of the record.
 *
 * A reader of a split stops before the first record whose header starts at or after `end`: a
 * record belongs to the split in which its header starts, and is read whole even when its body
 * runs past the split. Having read a record, it checks the header it stops at too: the next
 * split starts at the first sound header it finds, so a damaged header right there would
 * otherwise be passed over by both.
 *
 * Memory is only ever allocated for bytes that exist. When the stream's length is known (an
 * uncompressed file), a length field that runs past it is a truncated record before anything is
 * allocated; otherwise the buffer grows as the record's bytes arrive, so a lying length costs at
 * most about twice what the stream really holds.
 *
 * @param in       the stream, positioned at file offset `start`
 * @param path     the file, for error messages
 * @param start    the file offset `in` starts at
 * @param end      no record whose header starts at or after this offset is read
 * @param streamLength the length of the whole stream (the file's, uncompressed), or -1: unknown
 * @param settings the largest record, whether data CRCs are checked, and whether [[next]] makes
 *                 each record's data whole in [[data]] (without it, for `count()` and other
 *                 queries that need no column, records are only checksummed chunk by chunk, and
 *                 the buffer never grows)
 * @param compression the codec `in` was decompressed with (none: the file's own bytes), for
 *                 error messages and for the callers that accept some codecs only
 */
private[sparktfrecord] final class TFRecordReader(
    in: InputStream,
    path: String,
    start: Long,
    end: Long,
    streamLength: Long,
    settings: FramingSettings,
    val compression: TFRecordCompression = TFRecordCompression.None)
  extends java.io.Closeable {
  import TFRecordFraming._

  // Copied out of `settings`: the per-record code reads fields of its own.
  private val maxRecordBytes = settings.maxRecordBytes
  private val verifyChecksums = settings.verifyChecksums
  private val keepData = settings.keepData

  private val crc = new CRC32C
  private var buffer = new Array[Byte](TFRecordReader.BufferBytes)
  private var bufPos = 0
  private var bufLimit = 0
  private var streamPos = start // file offset of buffer(bufLimit)
  private var readAny = false // whether a record was read

  /**
   * The array holding the current record's data, `data[dataStart, dataStart + length)`: the
   * reader's buffer, valid until the next call of [[next]].
   */
  def data: Array[Byte] = buffer
  var dataStart: Int = 0
  var length: Int = 0
  def dataEnd: Int = dataStart + length
  /** File offset of the current record's header. */
  var offset: Long = start

  def position: Long = streamPos - (bufLimit - bufPos)

  /** Reads the next record; false at a clean end of the stream. */
  def next(): Boolean =
    try readRecord()
    catch {
      case e: TFRecordCorruptException => throw e
      case e: java.io.IOException =>
        // A decompressor's complaint (bad gzip data, ...), or the file system's.
        throw new TFRecordCorruptException(
          TFRecordError.Unreadable, s"Cannot read TFRecord (${e.getMessage})", path, offset)
    }

  private def readRecord(): Boolean = {
    offset = position
    if (offset >= end) {
      if (readAny) readHeader() // the split's last record must end where a record starts
      return false
    }
    val len = readHeader()
    if (len < 0) return false
    bufPos += HeaderBytes
    length = len.toInt
    val computedCrc = if (keepData) {
      // The data and its footer, whole in the buffer: the data is read where it lies.
      if (!ensure(length + FooterBytes)) truncated(length)
      dataStart = bufPos
      bufPos += length
      if (verifyChecksums) maskedCrc(crc, buffer, dataStart, length) else 0
    } else {
      val skipped = skipData(length)
      if (!ensure(FooterBytes)) truncated(length)
      skipped
    }
    val dataCrc = ProtoWire.readFixed32(buffer, bufPos)
    bufPos += FooterBytes
    if (verifyChecksums && computedCrc != dataCrc) {
      corrupt(TFRecordError.DataChecksum, "Corrupt TFRecord: data checksum mismatch")
    }
    readAny = true
    true
  }

  /**
   * Checks the header at `offset` (left unconsumed at `bufPos`) and returns its length, or -1
   * at a clean end of the stream: a header whose length checksum fails, whose length is above
   * `maxRecordBytes`, or whose record would run past the end of the stream is an error here,
   * before anything is allocated for it.
   */
  private def readHeader(): Long = {
    if (!ensure(HeaderBytes)) {
      if (bufLimit - bufPos == 0) return -1
      truncatedHeader()
    }
    val len = ProtoWire.readFixed64(buffer, bufPos)
    val lengthCrc = ProtoWire.readFixed32(buffer, bufPos + 8)
    if (maskedCrc(crc, buffer, bufPos, 8) != lengthCrc) badLengthChecksum()
    val fits = streamLength < 0 || len <= streamLength - offset - OverheadBytes
    if (len < 0 || len > maxRecordBytes || !fits) badLength(len)
    len
  }

  // Errors are built out of line, keeping the per-record methods small enough to inline.
  private def corrupt(condition: String, message: String): Nothing =
    throw new TFRecordCorruptException(condition, message, path, offset)

  /** At offset 0 of a file, says what the file looks like when that is known. */
  private def badLengthChecksum(): Nothing = {
    val hint = if (offset != 0) ""
    else TFRecordCompression.likely(java.util.Arrays.copyOfRange(buffer, bufPos, bufLimit),
      bufLimit - bufPos, compression, byName = false)
    corrupt(TFRecordError.LengthChecksum,
      "Corrupt TFRecord: length checksum mismatch" +
        (if (hint.isEmpty) "" else s" ($hint)"))
  }

  private def truncatedHeader(): Nothing =
    corrupt(TFRecordError.Truncated,
      s"Truncated TFRecord: ${bufLimit - bufPos} of $HeaderBytes header bytes")

  private def badLength(len: Long): Nothing =
    if (len < 0 || len > maxRecordBytes) {
      corrupt(TFRecordError.RecordTooLarge,
        s"TFRecord of ${java.lang.Long.toUnsignedString(len)} bytes exceeds " +
          s"maxRecordBytes ($maxRecordBytes)")
    } else {
      corrupt(TFRecordError.Truncated,
        s"Truncated TFRecord: the header claims $len data bytes, but the file ends " +
          s"${streamLength - offset - HeaderBytes} bytes after it")
    }

  /** Passes over the data in the buffer, checksumming it there; returns the masked CRC. */
  private def skipData(len: Int): Int = {
    crc.reset()
    var left = len
    while (left > 0) {
      if (bufPos == bufLimit && !ensure(1)) truncated(len)
      val n = math.min(left, bufLimit - bufPos)
      if (verifyChecksums) crc.update(buffer, bufPos, n)
      bufPos += n
      left -= n
    }
    mask(crc.getValue.toInt)
  }

  private def truncated(len: Int): Nothing =
    corrupt(TFRecordError.Truncated,
      s"Truncated TFRecord: stream ends inside a record of $len data bytes")

  /**
   * Makes `n` bytes available at `bufPos`; false at the end of the stream. The buffer grows when
   * `n` is more than it holds. When the stream's length is known (the header was checked against
   * it), at once, to `n` and room for up to three more records of that size that the stream
   * holds: the part of a record moved to the front at each refill is then a small share of what
   * is read. Otherwise only when it is full, at most doubling, so that its size follows the
   * bytes that arrived.
   */
  private def ensure(n: Int): Boolean = {
    if (bufLimit - bufPos >= n) return true
    System.arraycopy(buffer, bufPos, buffer, 0, bufLimit - bufPos)
    bufLimit -= bufPos
    bufPos = 0
    if (n > buffer.length && streamLength >= 0) {
      val more = math.min(3L * n, TFRecordReader.MaxExtraBufferBytes)
      val room = math.min(n + more, bufLimit + streamLength - streamPos)
      grow(math.max(n.toLong, math.min(room, Int.MaxValue - 8L)).toInt)
    }
    while (bufLimit < n) {
      if (bufLimit == buffer.length) grow(math.min(n.toLong, buffer.length * 2L).toInt)
      val r = try in.read(buffer, bufLimit, buffer.length - bufLimit)
      catch {
        case _: EOFException => -1
      }
      if (r < 0) return false
      bufLimit += r
      streamPos += r
    }
    true
  }

  private def grow(size: Int): Unit = buffer = java.util.Arrays.copyOf(buffer, size)

  override def close(): Unit = in.close()
}

private[sparktfrecord] object TFRecordReader {
  final val BufferBytes = 1 << 16
  /** The most that the buffer holds beyond the record that made it grow. */
  final val MaxExtraBufferBytes = 1L << 24

  /**
   * Whether a file may be read in splits: files that their name (or the `compression` option)
   * does not say are compressed can, unless `splitFiles` is off. A split's reader starts at the
   * first record header in it (found by its length CRC) and reads every record whose header
   * starts in it. Compressed files are read whole: one whose first bytes say so
   * ([[TFRecordCompression.detect]]) by the split at its start, all others of it reading nothing.
   */
  def isSplittable(path: Path, compression: TFRecordCompression, conf: Configuration): Boolean =
    TFRecordCompression.forFile(path, compression, conf) == TFRecordCompression.None

  /**
   * Opens a file to be read from a position to the end of a split or of the file: see
   * [[HadoopCompat.openForRead]].
   */
  def openStream(path: Path, conf: Configuration, fileLength: Long): FSDataInputStream =
    HadoopCompat.openForRead(path, conf, fileLength)

  /**
   * Opens a whole file of `fileLength` bytes for reading, decompressing it when its name or the
   * settings say so, else when its first bytes do ([[TFRecordCompression.detect]]).
   */
  def open(
      path: Path,
      conf: Configuration,
      settings: FramingSettings,
      fileLength: Long): TFRecordReader = {
    val raw = openStream(path, conf, fileLength)
    try detecting(raw, path, conf, settings, fileLength)
    catch {
      case e: Throwable =>
        raw.close()
        throw e
    }
  }

  /**
   * Reads the first bytes of `raw` (at offset 0) and opens the whole file as its name or the
   * settings say, else as those bytes say: as it is (a split reader of `[0, end)`) or
   * decompressed (the whole file, whatever `end`). The bytes read are handed on in front of the
   * rest of the stream, not read again: on an object store a seek back would cost a request.
   */
  private def detecting(
      raw: FSDataInputStream,
      path: Path,
      conf: Configuration,
      settings: FramingSettings,
      fileLength: Long,
      end: Long = Long.MaxValue): TFRecordReader = {
    val head = new Array[Byte](TFRecordCompression.HeadBytes)
    val n = readHead(raw, head)
    val in = new SequenceInputStream(new ByteArrayInputStream(head, 0, n), raw)
    val named = TFRecordCompression.forFile(path, settings.compression, conf)
    val detected = named == TFRecordCompression.None
    val codec = if (detected) TFRecordCompression.detect(head, n) else named
    if (codec == TFRecordCompression.None) {
      new TFRecordReader(in, path.toString, 0L, end, fileLength, settings)
    } else decompressing(in, head, n, path, conf, settings, codec, detected)
  }

  /** Fills `head` from `in` as far as the stream goes; returns how many bytes it holds. */
  private def readHead(in: InputStream, head: Array[Byte]): Int = {
    var n = 0
    var r = 0
    while (n < head.length && r >= 0) {
      r = in.read(head, n, head.length - n)
      if (r > 0) n += r
    }
    n
  }

  /**
   * A reader of the whole file, `in` (the file's bytes from offset 0, the first `n` of which are
   * `head`) decompressed by `codec`. A GZIP or ZLIB file that does not start as one fails here,
   * saying what its first bytes look like.
   */
  private def decompressing(
      in: InputStream,
      head: Array[Byte],
      n: Int,
      path: Path,
      conf: Configuration,
      settings: FramingSettings,
      codec: TFRecordCompression,
      detected: Boolean): TFRecordReader = {
    def cannot(why: String): Nothing = {
      // The extension decides before the option does.
      val byName = !detected &&
        TFRecordCompression.forFile(path, TFRecordCompression.None, conf) == codec
      val chosen = if (detected) "as its first bytes say"
      else if (byName) "as its name says"
      else "as the compression option says"
      val hint = TFRecordCompression.likely(head, n, codec, byName)
      throw new TFRecordCorruptException(TFRecordError.Unreadable,
        s"Cannot decompress as ${codec.name}, $chosen ($why${if (hint.isEmpty) "" else "; "}" +
          s"$hint)", path.toString, 0L)
    }
    if (n > 0 && !TFRecordCompression.startsAs(codec, head, n)) {
      cannot(s"the file does not start as a ${codec.name} stream does")
    }
    val decompressed = try codec.decompress(in, conf)
    catch {
      case e: java.io.IOException => cannot(String.valueOf(e.getMessage))
    }
    new TFRecordReader(decompressed, path.toString, 0L, Long.MaxValue, -1L, settings, codec)
  }

  /**
   * Opens the part `[start, start + length)` of a file of `fileLength` bytes, as Spark or Hadoop
   * planned it: the whole file (decompressed when need be) when the part covers it, else a split.
   */
  def openPart(
      path: Path,
      conf: Configuration,
      settings: FramingSettings,
      start: Long,
      length: Long,
      fileLength: Long): TFRecordReader =
    if (start == 0 && length >= fileLength) open(path, conf, settings, fileLength)
    else openSplit(path, conf, settings, start, start + length, fileLength)

  /**
   * Opens the split `[start, end)` of a file of `fileLength` bytes whose name says it is not
   * compressed: positioned at the first record whose header starts in the split (see
   * [[findRecordStart]]), or an empty reader when none does. A file whose first bytes say it is
   * compressed after all ([[TFRecordCompression.detect]]) is read whole by its split at offset 0,
   * and not at all by the others: each of those reads the file's first bytes to know.
   */
  def openSplit(
      path: Path,
      conf: Configuration,
      settings: FramingSettings,
      start: Long,
      end: Long,
      fileLength: Long): TFRecordReader = {
    val in = openStream(path, conf, fileLength)
    try {
      if (start == 0) return detecting(in, path, conf, settings, fileLength, end)
      val head = new Array[Byte](TFRecordCompression.HeadBytes)
      val n = math.min(head.length.toLong, fileLength).toInt
      in.readFully(0L, head, 0, n)
      val compressed = TFRecordCompression.detect(head, n) != TFRecordCompression.None
      val first = if (compressed) -1L
      else findRecordStart(in, path.toString, start, end, fileLength, settings)
      val from = if (first < 0) end else first
      in.seek(math.min(from, fileLength))
      new TFRecordReader(in, path.toString, from, end, fileLength, settings)
    } catch {
      case e: Throwable =>
        in.close()
        throw e
    }
  }

  /**
   * The offset of the first record header in `[start, end)`, or -1. A header is 8 length bytes
   * whose masked CRC32C follows them, with a length that fits in the rest of the file; the odds
   * of other bytes passing both tests are about 2^-62 per offset. The record's data CRC is then
   * checked too: a mismatch there is reported as a corrupt record rather than skipped, since the
   * record belongs to this split and no other reader would see it.
   */
  def findRecordStart(
      in: FSDataInputStream,
      path: String,
      start: Long,
      end: Long,
      fileLength: Long,
      settings: FramingSettings): Long = {
    import TFRecordFraming._
    val crc = new CRC32C
    val window = new Array[Byte](BufferBytes + HeaderBytes)
    var windowStart = start
    while (windowStart < end) {
      in.seek(windowStart)
      val wanted = math.min(window.length.toLong, fileLength - windowStart).toInt
      in.readFully(window, 0, wanted)
      var i = 0
      val last = wanted - HeaderBytes // the last offset in the window with a whole header
      while (i <= last && windowStart + i < end) {
        val length = ProtoWire.readFixed64(window, i)
        val offset = windowStart + i
        if (length >= 0 && length <= settings.maxRecordBytes &&
            length <= fileLength - offset - OverheadBytes &&
            maskedCrc(crc, window, i, 8) == ProtoWire.readFixed32(window, i + 8)) {
          if (settings.verifyChecksums) checkData(in, path, offset, length.toInt, crc)
          return offset
        }
        i += 1
      }
      if (wanted < window.length) return -1 // the file ends inside this window
      windowStart += BufferBytes
    }
    -1
  }

  private def checkData(in: FSDataInputStream, path: String, offset: Long, length: Int,
      crc: CRC32C): Unit = {
    import TFRecordFraming._
    in.seek(offset + HeaderBytes)
    crc.reset()
    val chunk = new Array[Byte](math.min(length, BufferBytes))
    var left = length
    while (left > 0) {
      val n = math.min(left, chunk.length)
      in.readFully(chunk, 0, n)
      crc.update(chunk, 0, n)
      left -= n
    }
    val footer = new Array[Byte](FooterBytes)
    in.readFully(footer, 0, FooterBytes)
    if (mask(crc.getValue.toInt) != ProtoWire.readFixed32(footer, 0)) {
      throw new TFRecordCorruptException(TFRecordError.DataChecksum,
        "Corrupt TFRecord: data checksum mismatch (found while looking for the first record " +
          "of a split)", path, offset)
    }
  }
}
