package io.github.sparktfrecord

import java.io.{ByteArrayOutputStream, File}
import java.nio.file.Files
import java.util.zip.{CRC32C, DeflaterOutputStream, GZIPOutputStream}

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import ErrorText._

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
  private def framing(opts: TFRecordOptions): FramingSettings = FramingSettings(opts, true)

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
    def compressed(name: String, wrap: ByteArrayOutputStream => java.io.OutputStream): Path = {
      val bytes = new ByteArrayOutputStream
      val out = wrap(bytes)
      out.write(plain)
      out.close()
      val file = new File(d, name)
      Files.write(file.toPath, bytes.toByteArray)
      new Path(file.toURI)
    }
    val offsets = datas.scanLeft(0L)(_ + _.length + OverheadBytes).init
    val expected = offsets.zip(datas.map(_.toSeq))
    for ((path, opts) <- Seq(
        compressed("a.tfrecord.gz", new GZIPOutputStream(_)) -> options(),
        compressed("b.tfrecord.deflate", new DeflaterOutputStream(_)) -> options(),
        compressed("c.zlib", new DeflaterOutputStream(_)) -> options(),
        compressed("d.bin", new GZIPOutputStream(_)) -> options("compression" -> "gzip"))) {
      assert(!TFRecordReader.isSplittable(path, opts, conf), path.getName)
      val length = new File(path.toUri).length
      assertEquals(drain(TFRecordReader.openPart(path, conf, framing(opts), 0, length, length)),
        expected, path.getName)
    }
    val (uncompressed, _) = write(d, "e.tfrecord", datas)
    assert(TFRecordReader.isSplittable(uncompressed, options(), conf))
    assert(!TFRecordReader.isSplittable(uncompressed, options("splitFiles" -> "false"), conf))
    val notGzip = compressed("f.tfrecord.gz", identity)
    val e = intercept[TFRecordCorruptException](
      TFRecordReader.open(notGzip, conf, framing(options()), new File(notGzip.toUri).length))
    assertEquals(e.offset, 0L)
    assert(e.text.startsWith("Cannot decompress ("), e.text)
  }
}
