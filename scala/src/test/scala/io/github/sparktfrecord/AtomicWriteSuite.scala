package io.github.sparktfrecord

import java.io.{File, IOException}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.github.sparktfrecord.framing.AtomicWrite

/** [[AtomicWrite]]: a file appears whole, replaces the one there, or leaves nothing behind. */
class AtomicWriteSuite extends UnitSuite {
  private val conf = new Configuration()

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("atomic-write-suite").toFile,
    teardown = d => { d.listFiles.foreach(_.delete()); d.delete() })

  /**
   * Every name in `dir`, `.crc` files included: there are none, as the file is created without
   * the local file system's checksum file (HadoopCompat.createNew).
   */
  private def names(dir: File): Seq[String] = dir.list.sorted.toSeq

  private def text(f: File): String = new String(Files.readAllBytes(f.toPath), UTF_8)

  dir.test("writes the file, and replaces one that is there") { d =>
    val file = new Path(new File(d, "info.json").toURI)
    val fs = file.getFileSystem(conf)
    AtomicWrite(fs, file)(_.write("first".getBytes(UTF_8)))
    assertEquals(text(new File(d, "info.json")), "first")
    AtomicWrite(fs, file)(_.write("second".getBytes(UTF_8)))
    assertEquals(text(new File(d, "info.json")), "second")
    assertEquals(names(d), Seq("info.json"))
  }

  dir.test("a write that fails leaves the file as it was, and no temporary file") { d =>
    val file = new Path(new File(d, "info.json").toURI)
    val fs = file.getFileSystem(conf)
    AtomicWrite(fs, file)(_.write("kept".getBytes(UTF_8)))
    val e = intercept[IOException](AtomicWrite(fs, file) { out =>
      out.write("half".getBytes(UTF_8))
      throw new IOException("disk full")
    })
    assertEquals(e.getMessage, "disk full")
    assertEquals(text(new File(d, "info.json")), "kept")
    assertEquals(names(d), Seq("info.json"))
  }
}
