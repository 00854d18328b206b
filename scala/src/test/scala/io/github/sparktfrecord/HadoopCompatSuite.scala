package io.github.sparktfrecord

import java.io.File
import java.nio.file.Files

import scala.annotation.nowarn

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

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
}
