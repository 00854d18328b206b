package io.github.sparktfrecord

import java.io.{ByteArrayOutputStream, File}
import java.nio.file.Files
import java.util.zip.{CRC32C, DeflaterOutputStream, GZIPOutputStream}

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import ErrorText._

import io.github.sparktfrecord.framing.{FramingSettings, TFRecordCompression, TFRecordFraming}
import io.github.sparktfrecord.framing.TFRecordReader
import io.github.sparktfrecord.sql.TFRecordOptions
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Files on the local file system, through Hadoop's, read whole and in splits: every record read
 * exactly once over all the splits of a file, whatever the split size.
 */
class TFRecordSplitSuite extends UnitSuite {
  import ProtoBytes._
  import TFRecordFraming._

  private val conf = new Configuration()

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("tfrecord-split-suite").toFile,
    teardown = d => { d.listFiles.foreach(_.delete()); d.delete() })

  private def framed(data: Array[Byte]): Array[Byte] = {
    val buf = new Array[Byte](OverheadBytes + data.length)
    System.arraycopy(data, 0, buf, HeaderBytes, data.length)
    frame(new CRC32C, buf, data.length)
    buf
  }

  /** Writes the records framed into `name`; returns its path and each record's offset. */
  private def write(dir: File, name: String, datas: Seq[Array[Byte]]): (Path, Seq[Long]) = {
    val file = new File(dir, name)
    Files.write(file.toPath, cat(datas.map(framed): _*))
    (new Path(file.toURI), datas.scanLeft(0L)(_ + _.length + OverheadBytes).init)
  }

  private def options(pairs: (String, String)*): TFRecordOptions =
    new TFRecordOptions(pairs.toMap)

  /** A reader's settings from options, keeping each record's data. */
  private def framing(opts: TFRecordOptions): FramingSettings = opts.framing(true)

  private def drain(r: TFRecordReader): Seq[(Long, Seq[Byte])] =
    try {
      val out = Seq.newBuilder[(Long, Seq[Byte])]
      while (r.next()) out += ((r.offset, r.data.slice(r.dataStart, r.dataEnd).toSeq))
      out.result()
    } finally r.close()

  /** The records of all the splits of `size` bytes, in order, as Spark would plan them. */
  private def readInSplits(
      path: Path,
      size: Long,
      opts: TFRecordOptions): Seq[(Long, Seq[Byte])] = {
    val length = new File(path.toUri).length
    (0L until length by size).flatMap { start =>
      drain(TFRecordReader.openPart(path, conf, framing(opts), start,
        math.min(size, length - start),
        length))
    }
  }

  private def randomRecords(seed: Int, count: Int, maxBytes: Int): Seq[Array[Byte]] = {
    val random = new Random(seed)
    Seq.fill(count) {
      val data = new Array[Byte](if (random.nextInt(5) == 0) 0 else random.nextInt(maxBytes))
      random.nextBytes(data)
      data
    }
  }

  dir.test("every record once over all splits, down to splits of 1 byte") { d =>
    val datas = randomRecords(1, 15, 24)
    val (path, offsets) = write(d, "small.tfrecord", datas)
    val expected = offsets.zip(datas.map(_.toSeq))
    val length = new File(path.toUri).length
    // Around the header (12 bytes) and the overhead of a record (16), and the whole file.
    for (size <- Seq(1L, 2L, 3L, 7L, 11L, 12L, 13L, 16L, 17L, 29L, 64L, length - 1, length,
        length + 1)) {
      assertEquals(readInSplits(path, size, options()), expected, s"splits of $size bytes")
    }
    for (size <- Seq(13L, 64L)) {
      assertEquals(readInSplits(path, size, options("verifyChecksums" -> "false")), expected,
        s"splits of $size bytes, verifyChecksums false")
    }
  }

  dir.test("every record once over all splits of a file with records larger than a split") { d =>
    val datas = randomRecords(2, 60, 5000) ++ Seq(new Array[Byte](70000), new Array[Byte](0),
      Array.fill[Byte](140000)(7)) ++ randomRecords(3, 30, 300)
    val (path, offsets) = write(d, "large.tfrecord", datas)
    val expected = offsets.zip(datas.map(_.toSeq))
    val length = new File(path.toUri).length
    for (size <- Seq(997L, 4096L, 65535L, 65536L, 65549L, 100000L, length / 2, length)) {
      assertEquals(readInSplits(path, size, options()), expected, s"splits of $size bytes")
    }
  }

  dir.test("a split without a record start is empty; a bad data CRC at its start is reported") {
    d =>
      val datas = Seq(new Array[Byte](100), utf8("x"), new Array[Byte](50))
      val (path, offsets) = write(d, "three.tfrecord", datas)
      val length = new File(path.toUri).length
      // Inside the first record's data: no header starts there.
      assertEquals(drain(TFRecordReader.openSplit(path, conf, framing(options()), 20, 100, length)),
        Seq.empty[(Long, Seq[Byte])])
      val bytes = Files.readAllBytes(new File(path.toUri).toPath)
      bytes(offsets(1).toInt + HeaderBytes) = 'y'
      Files.write(new File(path.toUri).toPath, bytes)
      val e = intercept[TFRecordCorruptException](
        TFRecordReader.openSplit(path, conf, framing(options()), 20, length, length))
      assertEquals(e.offset, offsets(1))
      assert(e.text.startsWith("Corrupt TFRecord: data checksum mismatch (found while " +
          "looking for the first record of a split)"), e.text)
      // Without checksums the search takes the header alone.
      val unchecked = framing(options("verifyChecksums" -> "false"))
      assertEquals(drain(TFRecordReader.openSplit(path, conf, unchecked, 20, length, length))
          .map(_._1), offsets.drop(1))
  }

  dir.test("a record above maxRecordBytes fails in splits as it does in the whole file") { d =>
    val datas = Seq(new Array[Byte](10), new Array[Byte](1000), new Array[Byte](10))
    val (path, offsets) = write(d, "big.tfrecord", datas)
    val opts = options("maxRecordBytes" -> "500")
    val length = new File(path.toUri).length
    val whole = intercept[TFRecordCorruptException](
      drain(TFRecordReader.open(path, conf, framing(opts), length)))
    assertEquals((whole.offset, whole.text), (offsets(1),
      "TFRecord of 1000 bytes " +
        s"exceeds maxRecordBytes (500) at byte offset ${offsets(1)} of ${path.toString}"))
    // The search for a split's first record passes over it, but the split before stops there
    // and checks that header.
    for (size <- Seq(1L, 5L, 26L, 27L, 100L, 1000L, length)) {
      val e = intercept[TFRecordCorruptException](readInSplits(path, size, opts))
      assertEquals((e.offset, e.text), (whole.offset, whole.text), s"size $size")
    }
  }

  dir.test("compressed files are read whole, by extension or by the option") { d =>
    val datas = randomRecords(4, 50, 2000)
    val plain = cat(datas.map(framed): _*)
    def compressed(name: String, wrap: ByteArrayOutputStream => java.io.OutputStream): Path =
      compressedFile(d, name, plain, wrap)
    val offsets = datas.scanLeft(0L)(_ + _.length + OverheadBytes).init
    val expected = offsets.zip(datas.map(_.toSeq))
    for ((path, opts) <- Seq(
        compressed("a.tfrecord.gz", new GZIPOutputStream(_)) -> options(),
        compressed("b.tfrecord.deflate", new DeflaterOutputStream(_)) -> options(),
        compressed("c.zlib", new DeflaterOutputStream(_)) -> options(),
        compressed("d.bin", new GZIPOutputStream(_)) -> options("compression" -> "gzip"))) {
      assert(!opts.isSplittable(path, conf), path.getName)
      val length = new File(path.toUri).length
      assertEquals(drain(TFRecordReader.openPart(path, conf, framing(opts), 0, length, length)),
        expected, path.getName)
    }
    val (uncompressed, _) = write(d, "e.tfrecord", datas)
    assert(options().isSplittable(uncompressed, conf))
    assert(!options("splitFiles" -> "false").isSplittable(uncompressed, conf))
    val notGzip = compressed("f.tfrecord.gz", identity)
    val e = intercept[TFRecordCorruptException](
      TFRecordReader.open(notGzip, conf, framing(options()), new File(notGzip.toUri).length))
    assertEquals(e.offset, 0L)
    assert(e.text.startsWith("Cannot decompress as gzip, as its name says ("), e.text)
  }

  /** `plain` compressed by `wrap` into `d/name`. */
  private def compressedFile(
      d: File,
      name: String,
      plain: Array[Byte],
      wrap: ByteArrayOutputStream => java.io.OutputStream): Path = {
    val bytes = new ByteArrayOutputStream
    val out = wrap(bytes)
    out.write(plain)
    out.close()
    val file = new File(d, name)
    Files.write(file.toPath, bytes.toByteArray)
    new Path(file.toURI)
  }

  /** The first 12 bytes of a file whose first record holds `length` data bytes. */
  private def header(length: Long): Array[Byte] = {
    val head = new Array[Byte](HeaderBytes)
    writeLongLE(head, 0, length)
    ProtoWire.writeFixed32(head, 8, maskedCrc(new CRC32C, head, 0, 8))
    head
  }

  test("detect: a sound TFRecord header is uncompressed, whatever its first bytes") {
    import TFRecordCompression._
    // 0x088b1f = 559903: the length's bytes begin 1f 8b 08, gzip's magic and method.
    val gzipLike = header(0x088b1fL)
    assertEquals(gzipLike.take(3).toSeq, Seq(0x1f, 0x8b, 0x08).map(_.toByte))
    assertEquals(detect(gzipLike, HeadBytes), None)
    // 0x9c78: the length's low byte is 0x78 and 78 9c is a valid zlib header (0x789c % 31 == 0).
    val zlibLike = header(0x9c78L)
    assertEquals(zlibLike.take(2).toSeq, Seq(0x78, 0x9c).map(_.toByte))
    assertEquals(detect(zlibLike, HeadBytes), None)
    // The same bytes with a wrong length CRC are what they look like.
    val badCrc = gzipLike.clone()
    badCrc(8) = (badCrc(8) ^ 1).toByte
    assertEquals(detect(badCrc, HeadBytes), Gzip)
    val zlibHead = zlibLike.clone()
    zlibHead(8) = (zlibHead(8) ^ 1).toByte
    assertEquals(detect(zlibHead, HeadBytes), Deflate)
    // 78 9d is not a zlib header (0x789d % 31 != 0); 1f 8b 07 is not gzip's deflate method.
    assertEquals(detect(Array[Byte](0x78, 0x9d.toByte, 0, 0), 4), None)
    assertEquals(detect(Array[Byte](0x1f, 0x8b.toByte, 7, 0), 4), None)
    assertEquals(detect(new Array[Byte](HeadBytes), 0), None) // an empty file
    assertEquals(detect(Array[Byte](0x1f, 0x8b.toByte, 8), 3), Gzip) // shorter than a header
  }

  dir.test("uncompressed files whose first length looks like gzip or zlib read as they are") { d =>
    for ((length, name) <- Seq(0x088b1f -> "gzip-like", 0x9c78 -> "zlib-like")) {
      val datas = Seq(Array.tabulate[Byte](length)(_.toByte), Array[Byte](1, 2, 3))
      val (path, offsets) = write(d, name, datas)
      val expected = offsets.zip(datas.map(_.toSeq))
      val bytes = Files.readAllBytes(new File(path.toUri).toPath)
      assertEquals(TFRecordCompression.detect(bytes, HeaderBytes), TFRecordCompression.None)
      val fileLength = bytes.length.toLong
      assertEquals(drain(TFRecordReader.open(path, conf, framing(options()), fileLength)),
        expected, name)
      for (size <- Seq(1000L, 40000L, fileLength)) {
        assertEquals(readInSplits(path, size, options()), expected, s"$name in splits of $size")
      }
    }
  }

  dir.test("gzip and zlib files without an extension are detected, whole and in splits") { d =>
    val datas = randomRecords(7, 200, 3000)
    val plain = cat(datas.map(framed): _*)
    val expected = datas.scanLeft(0L)(_ + _.length + OverheadBytes).init.zip(datas.map(_.toSeq))
    for ((path, codec) <- Seq(
        compressedFile(d, "train.tfrecord-00000-of-00002", plain, new GZIPOutputStream(_)) ->
          TFRecordCompression.Gzip,
        compressedFile(d, "train.tfrecord-00001-of-00002", plain, new DeflaterOutputStream(_)) ->
          TFRecordCompression.Deflate,
        compressedFile(d, "named.tfrecord", plain, new GZIPOutputStream(_)) ->
          TFRecordCompression.Gzip)) {
      // Planned by name: Spark may split it; the split at 0 reads it all, the others nothing.
      assert(options().isSplittable(path, conf), path.getName)
      val length = new File(path.toUri).length
      val whole = TFRecordReader.open(path, conf, framing(options()), length)
      assertEquals(whole.compression, codec, path.getName)
      assertEquals(drain(whole), expected, path.getName)
      for (size <- Seq(100L, 4096L, length / 3 + 1, length)) {
        assertEquals(readInSplits(path, size, options()), expected, s"${path.getName} / $size")
      }
      // compression=none is the default: the first bytes still decide.
      assertEquals(readInSplits(path, 1000L, options("compression" -> "none")), expected)
      // Without data (count()), likewise.
      val counted = TFRecordReader.open(path, conf, options().framing(false), length)
      assertEquals(Iterator.continually(counted.next()).takeWhile(identity).size, datas.size)
      counted.close()
    }
  }

  dir.test("errors at offset 0 say what the first bytes look like and the option to set") { d =>
    val plain = cat(randomRecords(8, 5, 100).map(framed): _*)
    def opened(path: Path, opts: TFRecordOptions): Throwable = intercept[Throwable] {
      val r = TFRecordReader.open(path, conf, framing(opts), new File(path.toUri).length)
      try while (r.next()) {}
      finally r.close()
    }
    val gzip = compressedFile(d, "g", plain, new GZIPOutputStream(_))
    val asZlib = opened(gzip, options("compression" -> "zlib"))
    assertEquals(asZlib.asInstanceOf[TFRecordError].condition, TFRecordError.Unreadable)
    assertEquals(asZlib.text,
      "Cannot decompress as deflate, as the compression option says " +
        "(the file does not start as a deflate stream does; the file's first bytes are " +
        "gzip's: set compression=gzip (or leave it unset: GZIP and ZLIB are detected by their " +
        s"first bytes)) at byte offset 0 of $gzip")
    val zlib = compressedFile(d, "z", plain, new DeflaterOutputStream(_))
    val asGzip = opened(zlib, options("compression" -> "gzip"))
    assert(asGzip.text.contains("are a zlib header (TensorFlow's ZLIB): set compression=zlib"),
      asGzip.text)
    val plainFile = compressedFile(d, "p", plain, identity)
    val plainAsGzip = opened(plainFile, options("compression" -> "gzip"))
    assert(plainAsGzip.text.contains(
        "are an uncompressed TFRecord header: set compression=none"), plainAsGzip.text)
    val misnamed = compressedFile(d, "p.tfrecord.gz", plain, identity)
    assert(opened(misnamed, options()).text.contains("Cannot decompress as gzip, as its name " +
      "says (the file does not start as a gzip stream does; the file's first bytes are an " +
      "uncompressed TFRecord header, but its extension says gzip: rename it)"))
    val bzip2 = compressedFile(d, "b", "BZh91AY&SY0123456789".getBytes("US-ASCII"), identity)
    val asPlain = opened(bzip2, options())
    assertEquals(asPlain.asInstanceOf[TFRecordError].condition, TFRecordError.LengthChecksum)
    assertEquals(asPlain.text,
      "Corrupt TFRecord: length checksum mismatch (the file's first " +
        "bytes are bzip2's: set compression=bzip2 with allowNonTensorFlowCodec=true) at byte " +
        s"offset 0 of $bzip2")
    val other = compressedFile(d, "o", Array.fill[Byte](20)(7), identity)
    assertEquals(opened(other, options()).text,
      s"Corrupt TFRecord: length checksum mismatch at byte offset 0 of $other")
  }
}
