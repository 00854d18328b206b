package io.github.sparktfrecord

import java.io.{File, IOException}
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import io.github.sparktfrecord.codec.RecordSerializer.ValueCounts
import io.github.sparktfrecord.tfds.TFRecordManifest
import io.github.sparktfrecord.tfds.TFRecordManifest.{Entry, Manifest, TaskCounts}

/**
 * [[TFRecordManifest]] below Spark: its JSON, the merge of a write into a folder's manifest (the
 * rules docs/deployment.md states), the listing of data files, and the folder lock.
 */
class TFRecordManifestSuite extends UnitSuite {
  private val conf = new Configuration()

  private val dir = FunFixture[File](
    setup = _ => Files.createTempDirectory("manifest-suite").toFile,
    teardown = d => delete(d))

  private def delete(f: File): Unit = {
    Option(f.listFiles).foreach(_.foreach(delete))
    f.delete()
  }

  private def manifest(files: Seq[Entry], counts: ValueCounts): Manifest =
    Manifest("Example", "id BIGINT", """{"type":"struct","fields":[]}""", Seq("day"), files,
      counts)

  private def counts(features: (String, (Int, Int))*): ValueCounts =
    ValueCounts(features.toMap, Map.empty)

  private val a = Entry("day=1/a.tfrecord", 10, 100, "none")
  private val b = Entry("day=2/b.tfrecord", 5, 50, "gzip")
  private val c = Entry("day=2/c.tfrecord", 7, 70, "none")

  dir.test("the JSON holds what it read back, and the counts of the files") { d =>
    val folder = new Path(d.toURI)
    val fs = folder.getFileSystem(conf)
    val m = manifest(Seq(b, a), counts("id" -> ((1, 1)), "x" -> ((0, 3))))
    TFRecordManifest.write(fs, folder, m)
    val back = TFRecordManifest.read(folder, conf).get
    assertEquals(back.files, Seq(a, b)) // sorted by path
    assertEquals(back.records, 15L)
    assertEquals(back.counts, m.counts)
    assertEquals(back.partitionColumns, Seq("day"))
    val text = new String(Files.readAllBytes(new File(d, TFRecordManifest.FileName).toPath))
    assert(text.contains("\"num_records\": 15"), text)
    assert(!text.contains("feature_lists"), text) // an Example folder's
  }

  test("a task's counts round-trip") {
    val t = TaskCounts(3, ValueCounts(Map("x" -> ((2, 4))), Map("f" -> ((0, 9)))))
    assertEquals(TaskCounts.parse(t.text), t)
  }

  test("a merge adds the write, keeps what is still there, and drops what went or changed") {
    val old = manifest(Seq(a, b), counts("id" -> ((1, 1))))
    val written = manifest(Seq(c), counts("id" -> ((1, 1)), "x" -> ((2, 2))))
    val listed = Map(a.path -> 100L, b.path -> 51L, c.path -> 70L) // b was rewritten
    val merged = TFRecordManifest.merge(Some(old), written, Set.empty, listed)
    assertEquals(merged.map(_.files.map(_.path)),
      Left(s"the folder holds ${b.path}, which " +
        "no manifest of its writes counted"))
    val gone = TFRecordManifest.merge(Some(old), written, Set.empty, listed - b.path)
    assertEquals(gone.map(_.files.toSet), Right(Set(a, c)))
    // A feature that the earlier files lacked had 0 values there.
    assertEquals(gone.map(_.counts.features), Right(Map("id" -> ((1, 1)), "x" -> ((0, 2)))))
  }

  test("a dynamic overwrite replaces the entries of the partitions it wrote") {
    val old = manifest(Seq(a, b), counts("id" -> ((1, 1))))
    val written = manifest(Seq(c), counts("id" -> ((1, 1))))
    // The old file of day=2 is still listed: Spark removes it after the commit.
    val listed = Map(a.path -> 100L, b.path -> 50L)
    val merged = TFRecordManifest.merge(Some(old), written, Set("day=2"), listed)
    assertEquals(merged.map(_.files.toSet), Right(Set(a, c)))
  }

  test("a file no manifest counted means no manifest, with the file named") {
    val written = manifest(Seq(a), counts())
    val merged = TFRecordManifest.merge(None, written, Set.empty,
      Map(a.path -> 100L, "tf-written.tfrecord" -> 9L))
    assert(merged.left.exists(_.contains("tf-written.tfrecord")), merged)
  }

  dir.test("the data files: hidden names and TFDS metadata are not, partition folders are") { d =>
    def touch(path: String, bytes: Int): Unit = {
      val f = new File(d, path)
      f.getParentFile.mkdirs()
      Files.write(f.toPath, new Array[Byte](bytes))
    }
    touch("part-0.tfrecord", 3)
    touch("day=1/part-1.tfrecord", 4)
    touch("_SUCCESS", 0)
    touch(".part-0.tfrecord.crc", 1)
    touch("_temporary/0/part-9.tfrecord", 5)
    touch("dataset_info.json", 2)
    touch("label.labels.txt", 2)
    touch("day=1/dataset_info.json", 6) // only the root's is metadata
    val folder = new Path(d.toURI)
    assertEquals(TFRecordManifest.dataFiles(folder.getFileSystem(conf), folder),
      Map("part-0.tfrecord" -> 3L, "day=1/part-1.tfrecord" -> 4L, "day=1/dataset_info.json" -> 6L))
  }

  dir.test("the lock: a second taker waits, then fails naming it; released, it is free") { d =>
    val folder = new Path(d.toURI)
    val fs: FileSystem = folder.getFileSystem(conf)
    val first = TFRecordManifest.lock(fs, folder, "first", waitSeconds = 1)
    val e = intercept[IOException](TFRecordManifest.lock(fs, folder, "second", waitSeconds = 1))
    assert(e.getMessage.contains(TFRecordManifest.LockName), e.getMessage)
    assert(e.getMessage.contains(TFRecordManifest.LockWaitKey), e.getMessage)
    first.release()
    TFRecordManifest.lock(fs, folder, "third", waitSeconds = 1).release()
    assert(!new File(d, TFRecordManifest.LockName).exists())
  }

  dir.test("a lock left by a dead commit (half an hour old) is taken over") { d =>
    val folder = new Path(d.toURI)
    val fs = folder.getFileSystem(conf)
    TFRecordManifest.lock(fs, folder, "dead", waitSeconds = 1)
    val lock = new File(d, TFRecordManifest.LockName)
    assert(lock.setLastModified(System.currentTimeMillis() - 31L * 60 * 1000))
    TFRecordManifest.lock(fs, folder, "next", waitSeconds = 1).release()
    assert(!lock.exists())
  }
}
