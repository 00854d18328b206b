package io.github.sparktfrecord

import java.io.{File, FileNotFoundException}
import java.nio.file.Files
import java.util.concurrent.{CompletableFuture, ConcurrentHashMap}
import java.util.concurrent.atomic.AtomicInteger

import scala.annotation.nowarn

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileSystem, FutureDataInputStreamBuilder, Path}
import org.apache.hadoop.fs.RawLocalFileSystem
import org.apache.hadoop.fs.impl.OpenFileParameters

import io.github.sparktfrecord.framing.HadoopCompat

/** [[HadoopCompat]]: what it does on the Hadoop Spark ships (tests/test_old_hadoop.py: older). */
class HadoopCompatSuite extends UnitSuite {

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("hadoop-compat-suite").toFile,
    teardown = d => {
      def remove(f: File): Unit = { Option(f.listFiles).foreach(_.foreach(remove)); f.delete() }
      remove(d)
    })

  test("propsWithPrefix is getPropsWithPrefix, which Hadoop 2.8 added") {
    val conf = new Configuration(false)
    conf.set("tfrecord.compression", "gzip")
    conf.set("tfrecord.maxRecordBytes", "${base}0")
    conf.set("base", "100")
    conf.set("tfrecords.other", "x")
    conf.set("other.tfrecord.x", "y")
    val found = HadoopCompat.propsWithPrefix(conf, "tfrecord.")
    assertEquals(found, conf.getPropsWithPrefix("tfrecord."))
    assertEquals(found.get("maxRecordBytes"), "1000")
    assertEquals(found.size, 2)
  }

  test("the Hadoop that Spark ships has openFile") {
    assert(HadoopCompat.hasOpenFile)
  }

  dir.test("a local file is read without its .crc side file: the bytes as they are") { d =>
    val conf = new Configuration()
    val path = new Path(new File(d, "a.bin").toURI)
    val out = FileSystem.getLocal(conf).create(path, false)
    try out.write(Array.tabulate[Byte](2000)(_.toByte))
    finally out.close()
    assert(new File(d, ".a.bin.crc").isFile)
    val file = new File(path.toUri)
    val bytes = Files.readAllBytes(file.toPath)
    bytes(1500) = (bytes(1500) ^ 1).toByte // what the .crc file says no longer holds
    Files.write(file.toPath, bytes)
    val in = HadoopCompat.openForRead(path, conf, bytes.length)
    val read = new Array[Byte](bytes.length)
    try {
      in.seek(1000)
      in.readFully(read, 1000, 1000)
      in.seek(0)
      in.readFully(read, 0, 1000)
    } finally in.close()
    assertEquals(read.toSeq, bytes.toSeq)
  }

  dir.test("a local file is read with no buffer in front: each read takes what it asks for") {
    d =>
      val conf = new Configuration()
      conf.setInt("io.file.buffer.size", 1 << 16) // as Spark sets it
      val path = new Path(new File(d, "a.bin").toURI)
      val bytes = Array.tabulate[Byte](200000)(i => (i * 31).toByte)
      Files.write(new File(path.toUri).toPath, bytes)
      // What the file system read from the file (Spark's task input metrics).
      @nowarn("cat=deprecation") def bytesRead = FileSystem.getAllStatistics.toArray
        .map(_.asInstanceOf[FileSystem.Statistics])
        .filter(_.getScheme == "file").map(_.getThreadStatistics.getBytesRead).sum
      val in = HadoopCompat.openForRead(path, conf, bytes.length)
      val read = new Array[Byte](100)
      try {
        val before = bytesRead
        in.readFully(read, 0, 10)
        // A buffer in front would have read 64 KiB of the file for these 10 bytes.
        assertEquals(bytesRead - before, 10L)
        in.seek(150000)
        in.readFully(read, 10, 90)
        assertEquals(bytesRead - before, 100L)
      } finally in.close()
      assertEquals(read.toSeq, (bytes.take(10) ++ bytes.slice(150000, 150090)).toSeq)
  }

  dir.test("createNew makes a local file with no .crc, counts its bytes, and never replaces") {
    d =>
      val conf = new Configuration()
      val path = new Path(new File(d, "sub/a.bin").toURI)
      val fs = path.getFileSystem(conf)
      // Deprecated, and what Spark's output metrics read.
      @nowarn("cat=deprecation") def written = FileSystem.getAllStatistics.toArray
        .map(_.asInstanceOf[FileSystem.Statistics])
        .filter(_.getScheme == "file").map(_.getThreadStatistics.getBytesWritten).sum
      val before = written
      val out = HadoopCompat.createNew(fs, path)
      try out.write(Array.fill[Byte](1234)(7))
      finally out.close()
      // Spark's task output metrics are these statistics, summed over the scheme.
      assertEquals(written - before, 1234L)
      assertEquals(new File(d, "sub").list.toSeq, Seq("a.bin"))
      assertEquals(Files.size(new File(d, "sub/a.bin").toPath), 1234L)
      intercept[org.apache.hadoop.fs.FileAlreadyExistsException](HadoopCompat.createNew(fs, path))
      assertEquals(Files.size(new File(d, "sub/a.bin").toPath), 1234L)
      // Under a file: Hadoop's exceptions, as Hadoop's own calls fail (the CLI's messages).
      val under = new Path(path, "x")
      val folder = intercept[java.io.IOException](HadoopCompat.mkdirs(fs, under))
      assert(folder.getClass.getName.startsWith("org.apache.hadoop."), folder)
      val file = intercept[java.io.IOException](HadoopCompat.createNew(fs, new Path(under, "f")))
      assert(file.getClass.getName.startsWith("org.apache.hadoop."), file)
  }

  /** `file:` read through `fs` (a class below), uncached, so that each test gets its own. */
  private def through(fs: Class[_ <: FileSystem]): Configuration = {
    val conf = new Configuration()
    conf.set("fs.file.impl", fs.getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    conf
  }

  /** Reads all of `path` with openForRead on `conf`'s file system. */
  private def readAll(path: Path, conf: Configuration, length: Int): Seq[Byte] = {
    val in = HadoopCompat.openForRead(path, conf, length)
    val read = new Array[Byte](length)
    try in.readFully(read)
    finally in.close()
    read.toSeq
  }

  private val failing = Seq(
    classOf[HadoopCompatSuite.NotLinkingFileSystem] -> "NoClassDefFoundError",
    classOf[HadoopCompatSuite.NoOpenFileFileSystem] -> "UnsupportedOperationException",
    classOf[HadoopCompatSuite.FailedFutureFileSystem] -> "ClassNotFoundException")
  for ((fs, thrown) <- failing) dir.test(s"a file system whose openFile throws $thrown: open") {
    d =>
      val path = new Path(new File(d, "a.bin").toURI)
      val bytes = Array.tabulate[Byte](3000)(i => (i * 7).toByte)
      Files.write(new File(path.toUri).toPath, bytes)
      val conf = through(fs)
      val (tried, opened) = HadoopCompatSuite.calls(fs)
      // The first file tries openFile, then opens; the file system's later files only open.
      assertEquals(readAll(path, conf, bytes.length), bytes.toSeq)
      assertEquals((tried.get, opened.get), (1, 1))
      assertEquals(readAll(path, conf, bytes.length), bytes.toSeq)
      assertEquals((tried.get, opened.get), (1, 2))
  }

  dir.test("an openFile that fails to read the file fails the read: no second request") { d =>
    val fs = classOf[HadoopCompatSuite.MissingFileSystem]
    val path = new Path(new File(d, "a.bin").toURI)
    Files.write(new File(path.toUri).toPath, Array[Byte](1, 2, 3))
    val e = intercept[FileNotFoundException](HadoopCompat.openForRead(path, through(fs), 3))
    assertEquals(e.getMessage, s"gone: $path")
    val (tried, opened) = HadoopCompatSuite.calls(fs)
    assertEquals((tried.get, opened.get), (1, 0))
  }
}

object HadoopCompatSuite {
  private val counts = new ConcurrentHashMap[Class[_], (AtomicInteger, AtomicInteger)]

  /** How many times `fs`'s openFile was tried, and its open(path) called. */
  def calls(fs: Class[_]): (AtomicInteger, AtomicInteger) =
    counts.computeIfAbsent(fs, _ => (new AtomicInteger, new AtomicInteger))

  /** The local file system, counting its openFile and open calls. */
  abstract class CountingFileSystem extends RawLocalFileSystem {
    override def open(f: Path, bufferSize: Int): FSDataInputStream = {
      calls(getClass)._2.incrementAndGet()
      super.open(f, bufferSize)
    }
    override def openFile(path: Path): FutureDataInputStreamBuilder = {
      calls(getClass)._1.incrementAndGet()
      super.openFile(path)
    }
  }

  /**
   * As Google's gcs-connector built for a newer Hadoop runs on Hadoop 3.3.4: its
   * openFileWithOptions names a class that Hadoop lacks (issue 44).
   */
  class NotLinkingFileSystem extends CountingFileSystem {
    override protected def openFileWithOptions(
        path: Path,
        parameters: OpenFileParameters): CompletableFuture[FSDataInputStream] =
      throw new NoClassDefFoundError("org/apache/hadoop/fs/Options$OpenFileOptions")
  }

  /** A file system that does not support openFile at all. */
  class NoOpenFileFileSystem extends CountingFileSystem {
    override def openFile(path: Path): FutureDataInputStreamBuilder = {
      super.openFile(path)
      throw new UnsupportedOperationException("openFile")
    }
  }

  /** A missing class reported through the future, which openForRead wraps in an IOException. */
  class FailedFutureFileSystem extends CountingFileSystem {
    override protected def openFileWithOptions(
        path: Path,
        parameters: OpenFileParameters): CompletableFuture[FSDataInputStream] = {
      val future = new CompletableFuture[FSDataInputStream]
      future.completeExceptionally(
        new ClassNotFoundException("org.apache.hadoop.fs.Options$OpenFileOptions"))
      future
    }
  }

  /** An openFile that runs and finds no file: the read fails as it would with open(path). */
  class MissingFileSystem extends CountingFileSystem {
    override protected def openFileWithOptions(
        path: Path,
        parameters: OpenFileParameters): CompletableFuture[FSDataInputStream] =
      throw new FileNotFoundException(s"gone: $path")
  }
}
