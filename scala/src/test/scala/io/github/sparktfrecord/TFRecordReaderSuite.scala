package io.github.sparktfrecord

import java.io.{ByteArrayInputStream, EOFException, IOException, InputStream}
import java.util.zip.CRC32C

import ErrorText._

import io.github.sparktfrecord.framing.{FramingSettings, TFRecordCompression, TFRecordFraming}
import io.github.sparktfrecord.framing.TFRecordReader
import io.github.sparktfrecord.sql.TFRecordOptions
import io.github.sparktfrecord.wire.ProtoWire

/** The framing, against files TensorFlow wrote, and [[TFRecordReader]] over streams. */
class TFRecordReaderSuite extends UnitSuite {
  import ProtoBytes._
  import TFRecordFraming._

  // tf.io.TFRecordWriter (TensorFlow 2.21) files of one record: b"", b"a" and b"hello".
  private val tfEmpty = hex("00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2")
  private val tfA = hex("01 00 00 00 00 00 00 00 01 75 de 41 61 78 6e e4 28")
  private val tfHello = hex("05 00 00 00 00 00 00 00 ea b2 04 3e 68 65 6c 6c 6f bb 1f 1c 19")

  /** One framed record, as [[TFRecordFraming.frame]] writes it. */
  private def framed(data: Array[Byte]): Array[Byte] = {
    val buf = new Array[Byte](OverheadBytes + data.length)
    System.arraycopy(data, 0, buf, HeaderBytes, data.length)
    assertEquals(frame(new CRC32C, buf, data.length), buf.length)
    buf
  }

  /** A header claiming `length` data bytes, with a sound length checksum. */
  private def header(length: Long): Array[Byte] = {
    val buf = new Array[Byte](HeaderBytes)
    writeLongLE(buf, 0, length)
    ProtoWire.writeFixed32(buf, 8, maskedCrc(new CRC32C, buf, 0, 8))
    buf
  }

  private def reader(
      bytes: Array[Byte],
      known: Boolean = true,
      maxRecordBytes: Int = TFRecordOptions.DefaultMaxRecordBytes,
      verify: Boolean = true,
      keepData: Boolean = true,
      in: Option[InputStream] = None): TFRecordReader =
    new TFRecordReader(in.getOrElse(new ByteArrayInputStream(bytes)), "test.tfrecord", 0L,
      Long.MaxValue, if (known) bytes.length.toLong else -1L,
      FramingSettings(TFRecordCompression.None, maxRecordBytes, verify, keepData))

  /** Every record of `r`: its offset and data. */
  private def records(r: TFRecordReader): Seq[(Long, Seq[Byte])] = {
    val out = Seq.newBuilder[(Long, Seq[Byte])]
    while (r.next()) out += ((r.offset, r.data.slice(r.dataStart, r.dataEnd).toSeq))
    out.result()
  }

  private def corrupt(r: TFRecordReader): (String, Long) = {
    val e = intercept[TFRecordCorruptException](while (r.next()) {})
    assertEquals(e.path, "test.tfrecord")
    assertEquals(e.text, s"${messageOf(e)} at byte offset ${e.offset} of test.tfrecord")
    (messageOf(e), e.offset)
  }

  private def messageOf(e: TFRecordCorruptException): String =
    e.text.substring(0, e.text.lastIndexOf(" at byte offset "))

  /** At most `chunk` bytes per read, as a network stream or a decompressor may hand them. */
  private def trickle(bytes: Array[Byte], chunk: Int): InputStream =
    new ByteArrayInputStream(bytes) {
      override def read(b: Array[Byte], off: Int, len: Int): Int =
        super.read(b, off, math.min(len, chunk))
    }

  test("CRC32C is Castagnoli's (RFC 3720's vectors) and the mask is TensorFlow's") {
    val crc = new CRC32C
    def value(bytes: Array[Byte]): Int = { crc.reset(); crc.update(bytes); crc.getValue.toInt }
    assertEquals(value(new Array[Byte](32)), 0x8a9136aa)
    assertEquals(value(Array.fill[Byte](32)(-1)), 0x62a8ab43)
    assertEquals(value(Array.tabulate[Byte](32)(_.toByte)), 0x46dd794e)
    assertEquals(value(Array.tabulate[Byte](32)(i => (31 - i).toByte)), 0x113fdb5c)
    // The masked CRCs in TensorFlow's files: of "" (CRC 0), of "a", and of their lengths.
    assertEquals(mask(0), 0xa282ead8)
    assertEquals(maskedCrc(crc, tfEmpty, 0, 8), ProtoWire.readFixed32(tfEmpty, 8))
    assertEquals(maskedCrc(crc, tfA, 12, 1), ProtoWire.readFixed32(tfA, 13))
    assertEquals(mask(value(utf8("a"))), 0x28e46e78)
    assertEquals(mask(value(utf8("hello"))), 0x191c1fbb)
  }

  test("frame writes TensorFlow's bytes") {
    assertEquals(toHex(framed(Array.emptyByteArray)), toHex(tfEmpty))
    assertEquals(toHex(framed(utf8("a"))), toHex(tfA))
    assertEquals(toHex(framed(utf8("hello"))), toHex(tfHello))
  }

  test("reads TensorFlow's records with their offsets, the stream's length known or not") {
    val file = cat(tfHello, tfEmpty, tfA)
    val expected = Seq((0L, utf8("hello").toSeq), (21L, Seq.empty[Byte]), (37L, utf8("a").toSeq))
    for (known <- Seq(true, false); chunk <- Seq(1, 5, 1 << 20)) {
      val r = reader(file, known, in = Some(trickle(file, chunk)))
      assertEquals(records(r), expected, s"known $known, chunk $chunk")
      assertEquals(r.position, file.length.toLong)
      assert(!r.next())
    }
    assertEquals(records(reader(Array.emptyByteArray)), Seq.empty[(Long, Seq[Byte])])
  }

  test("records larger than the buffer, through streams that hand out a few bytes at a time") {
    val sizes = Seq(0, 1, 4095, 4096, 4097, 65535, 65536, 65537, 200000, 3, 131072)
    val datas = sizes.map(n => Array.tabulate[Byte](n)(i => (i * 31 + n).toByte))
    val file = cat(datas.map(framed): _*)
    val offsets = datas.scanLeft(0L)(_ + _.length + OverheadBytes).init
    val expected = offsets.zip(datas.map(_.toSeq))
    for (known <- Seq(true, false); chunk <- Seq(7000, 65536, 1 << 20)) {
      assertEquals(records(reader(file, known, in = Some(trickle(file, chunk)))), expected,
        s"known $known, chunk $chunk")
      // Without the data: checksummed where it lies, only the lengths and offsets reported.
      val r = reader(file, known, keepData = false, in = Some(trickle(file, chunk)))
      val lengths = Seq.newBuilder[(Long, Int)]
      while (r.next()) lengths += ((r.offset, r.length))
      assertEquals(lengths.result(), offsets.zip(sizes))
    }
  }

  test("records are read where they lie: the buffer grows once, for room, within the file") {
    val image = 100000
    val datas = (0 until 20).map(n => Array.tabulate[Byte](image)(i => (i * 7 + n).toByte))
    val file = cat(datas.map(framed): _*)
    val r = reader(file)
    val buffers = Seq.newBuilder[Array[Byte]]
    var n = 0
    while (r.next()) {
      assertEquals(r.data.slice(r.dataStart, r.dataEnd).toSeq, datas(n).toSeq)
      buffers += r.data
      n += 1
    }
    assertEquals(n, 20)
    // One array for every record: no copy of the data into an array of its own.
    assertEquals(buffers.result().distinct.length, 1)
    // Room for a few records, so that the part moved to the front at a refill stays small.
    assertEquals(r.data.length, 4 * (image + TFRecordFraming.FooterBytes))
    // A file of one large record: the buffer holds what the file holds, no more.
    val one = reader(framed(datas.head))
    assert(one.next())
    assert(one.data.length <= image + OverheadBytes, s"${one.data.length} bytes")
  }

  test("a truncated header, body or footer names the record's offset") {
    val file = cat(tfA, tfHello)
    assertEquals(corrupt(reader(cat(file, tfA.take(5)))),
      ("Truncated TFRecord: 5 of 12 header bytes", 38L))
    for (known <- Seq(true, false)) {
      val r = reader(cat(file, tfA.take(12)), known)
      assertEquals(corrupt(r)._2, 38L)
    }
    // The stream's length known: the header's length is refused before the body is read.
    assertEquals(corrupt(reader(cat(file, tfHello.take(15)))), ("Truncated TFRecord: the " +
        "header claims 5 data bytes, but the file ends 3 bytes after it", 38L))
    assertEquals(corrupt(reader(cat(file, tfHello.take(19)))), ("Truncated TFRecord: the " +
        "header claims 5 data bytes, but the file ends 7 bytes after it", 38L))
    for (cut <- Seq(12, 15, 17, 19, 20)) {
      assertEquals(corrupt(reader(cat(file, tfHello.take(cut)), known = false)),
        ("Truncated TFRecord: stream ends inside a record of 5 data bytes", 38L), s"cut $cut")
    }
  }

  test("a length that runs past the stream allocates nothing for it") {
    val lying = cat(tfA, header(100000000L), utf8("short"))
    assertEquals(corrupt(reader(lying)), ("Truncated TFRecord: the header claims 100000000 " +
        "data bytes, but the file ends 5 bytes after it", 17L))
    val r = reader(lying, known = false)
    assertEquals(corrupt(r),
      ("Truncated TFRecord: stream ends inside a record of 100000000 data bytes", 17L))
    assert(r.data.length <= TFRecordReader.BufferBytes, s"${r.data.length} bytes")
  }

  test("maxRecordBytes, and a length field with its top bit set") {
    val data = new Array[Byte](100)
    val file = cat(tfA, framed(data))
    assertEquals(records(reader(file, maxRecordBytes = 100)).map(_._2.length), Seq(1, 100))
    assertEquals(corrupt(reader(file, maxRecordBytes = 99)),
      ("TFRecord of 100 bytes exceeds maxRecordBytes (99)", 17L))
    assertEquals(corrupt(reader(cat(header(-1L), data))),
      ("TFRecord of 18446744073709551615 bytes exceeds maxRecordBytes (2147483583)", 0L))
    assertEquals(corrupt(reader(cat(header(1L << 31), data), known = false)),
      ("TFRecord of 2147483648 bytes exceeds maxRecordBytes (2147483583)", 0L))
  }

  test("checksums: the length's always, the data's unless verifyChecksums is off") {
    val file = cat(tfA, tfHello, tfEmpty)
    def flipped(at: Int): Array[Byte] = {
      val copy = file.clone()
      copy(at) = (copy(at) ^ 0x10).toByte
      copy
    }
    for (at <- Seq(17, 24, 25, 28); verify <- Seq(true, false)) {
      assertEquals(corrupt(reader(flipped(at), verify = verify)),
        ("Corrupt TFRecord: length checksum mismatch", 17L), s"byte $at")
    }
    for (at <- Seq(29, 33, 34, 37); keepData <- Seq(true, false)) {
      val r = reader(flipped(at), keepData = keepData)
      assertEquals(corrupt(r), ("Corrupt TFRecord: data checksum mismatch", 17L), s"byte $at")
    }
    val unchecked = records(reader(flipped(30), verify = false))
    assertEquals(unchecked.map(r => new String(r._2.toArray, "UTF-8")), Seq("a", "hullo", ""))
  }

  test("a split's reader stops before `end` and checks the header it stops at") {
    val file = cat(tfA, tfHello, tfEmpty)
    val unlimited = FramingSettings(TFRecordCompression.None, Int.MaxValue, true, true)
    def split(bytes: Array[Byte], end: Long): TFRecordReader =
      new TFRecordReader(new ByteArrayInputStream(bytes), "test.tfrecord", 0L, end,
        bytes.length.toLong, unlimited)
    assertEquals(records(split(file, 17L)).map(_._1), Seq(0L))
    assertEquals(records(split(file, 18L)).map(_._1), Seq(0L, 17L))
    assertEquals(records(split(file, 38L)).map(_._1), Seq(0L, 17L))
    assertEquals(records(split(file, 39L)).map(_._1), Seq(0L, 17L, 38L))
    val damaged = file.clone()
    damaged(17 + 8) = 0
    assertEquals(corrupt(split(damaged, 17L)),
      ("Corrupt TFRecord: length checksum mismatch", 17L))
    // With no record read, there is no boundary to check.
    val empty = new TFRecordReader(new ByteArrayInputStream(damaged, 17, 100), "test.tfrecord",
      17L, 17L, damaged.length.toLong, unlimited)
    assert(!empty.next())
  }

  test("a stream's IOException becomes a corrupt record; an EOFException is the end") {
    val file = cat(tfA, tfHello)
    val failing = new ByteArrayInputStream(file) {
      override def read(b: Array[Byte], off: Int, len: Int): Int =
        if (pos >= 20) throw new IOException("boom") else super.read(b, off, math.min(len, 20))
    }
    assertEquals(corrupt(reader(file, in = Some(failing))),
      ("Cannot read TFRecord (boom)", 17L))
    val eof = new ByteArrayInputStream(file) {
      override def read(b: Array[Byte], off: Int, len: Int): Int =
        if (available() == 0) throw new EOFException else super.read(b, off, len)
    }
    assertEquals(records(reader(file, known = false, in = Some(eof))).map(_._1), Seq(0L, 17L))
  }
}
