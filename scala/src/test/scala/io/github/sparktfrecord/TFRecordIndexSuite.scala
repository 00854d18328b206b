package io.github.sparktfrecord

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import ErrorText._

import io.github.sparktfrecord.framing.{IndexWriter, TFRecordCompression, TFRecordFraming}
import io.github.sparktfrecord.framing.TFRecordWriter
import io.github.sparktfrecord.sql.TFRecordOptions
import io.github.sparktfrecord.tools.TFRecordIndex

/** Index files (written by the writer and by [[TFRecordIndex.indexFile]]). */
class TFRecordIndexSuite extends UnitSuite {
  import TFRecordFraming._

  private val conf = new Configuration()

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("tfrecord-index-suite").toFile,
    teardown = d => { d.listFiles.foreach(_.delete()); d.delete() })

  private def options(pairs: (String, String)*): TFRecordOptions =
    new TFRecordOptions(pairs.toMap)

  /** Writes records of the given data lengths; returns the data file. */
  private def write(
      dir: File,
      name: String,
      lengths: Seq[Int],
      compression: TFRecordCompression): Path = {
    val path = new Path(new File(dir, name).toURI)
    val writer = new TFRecordWriter(path, conf, compression, index = true)
    try lengths.foreach(n => writer.write(Array.fill(n)(n.toByte), n))
    finally writer.close()
    path
  }

  /** The names in `dir`, without the `.crc` files of Hadoop's local file system. */
  private def names(dir: File): Seq[String] = dir.list.filterNot(_.startsWith(".")).sorted.toSeq

  private def lines(path: Path): Seq[String] =
    new String(Files.readAllBytes(new File(path.toUri).toPath), StandardCharsets.US_ASCII)
      .split("\n", -1).toSeq

  /** The index lines of records of these data lengths: offset and framed size. */
  private def expected(lengths: Seq[Int]): Seq[String] =
    lengths.scanLeft(0L)(_ + _ + OverheadBytes).zip(lengths)
      .map { case (offset, n) => s"$offset ${n + OverheadBytes}" } :+ ""

  private val lengths = Seq(0, 1, 5, 127, 128, 70000, 3, 1 << 17)

  dir.test("the writer's index: one '<offset> <framed size>' line per record, newline-ended") {
    d =>
      val data = write(d, "a.tfrecord", lengths, TFRecordCompression.None)
      val index = IndexWriter.pathFor(data)
      assertEquals(index.getName, "_a.tfrecord.idx")
      assertEquals(lines(index), expected(lengths))
      assertEquals(new File(data.toUri).length, lengths.map(_ + OverheadBytes.toLong).sum)
  }

  dir.test("gzip files are indexed by offsets in the uncompressed stream") { d =>
    val data = write(d, "a.tfrecord.gz", lengths, TFRecordCompression.Gzip)
    assertEquals(lines(IndexWriter.pathFor(data)), expected(lengths))
  }

  dir.test("indexFile writes what the writer wrote, and replaces an old index") { d =>
    for ((name, codec) <- Seq("p.tfrecord" -> TFRecordCompression.None,
        "g.tfrecord.gz" -> TFRecordCompression.Gzip)) {
      val data = write(d, name, lengths, codec)
      val index = IndexWriter.pathFor(data)
      val written = lines(index)
      Files.write(new File(index.toUri).toPath, "stale".getBytes)
      assertEquals(TFRecordIndex.indexFile(data, conf, options()),
        (lengths.size.toLong, new File(data.toUri).length))
      assertEquals(lines(index), written)
    }
    assertEquals(names(d),
      Seq("_g.tfrecord.gz.idx", "_p.tfrecord.idx", "g.tfrecord.gz", "p.tfrecord"))
  }

  dir.test("indexFile on a damaged file fails naming it, and leaves no index behind") { d =>
    val data = write(d, "a.tfrecord", lengths, TFRecordCompression.None)
    new File(IndexWriter.pathFor(data).toUri).delete()
    val file = new File(data.toUri)
    val bytes = Files.readAllBytes(file.toPath)
    bytes(bytes.length / 2) = (bytes(bytes.length / 2) ^ 1).toByte
    Files.write(file.toPath, bytes)
    val e = intercept[TFRecordCorruptException](TFRecordIndex.indexFile(data, conf, options()))
    assert(e.text.contains("checksum"), e.text)
    assert(e.text.contains(data.toString), e.text)
    assertEquals(names(d), Seq("a.tfrecord"))
  }

  dir.test("deflate and other codecs have no index: refused naming the valid ones") { d =>
    val e = intercept[IllegalArgumentException](
      IndexWriter.checkCompression(TFRecordCompression.Deflate, "x.tfrecord.deflate"))
    assert(e.text.contains("x.tfrecord.deflate"), e.text)
    assert(e.text.contains("none, gzip"), e.text)
    val data = new Path(new File(d, "a.tfrecord.deflate").toURI)
    val w = new TFRecordWriter(data, conf, TFRecordCompression.Deflate)
    w.write(Array[Byte](1), 1)
    w.close()
    intercept[IllegalArgumentException](TFRecordIndex.indexFile(data, conf, options()))
    assertEquals(names(d), Seq("a.tfrecord.deflate"))
  }

  test("index lines at the limits of a long") {
    val out = new java.io.ByteArrayOutputStream
    val w = new IndexWriter(out)
    w.add(0L, 16L)
    w.add(Long.MaxValue, 9L)
    w.add(1234567890123L, 1000000L)
    w.close()
    assertEquals(out.toString("US-ASCII"),
      s"0 16\n${Long.MaxValue} 9\n1234567890123 1000000\n")
  }
}
