package io.github.sparktfrecord

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.spark.sql.Row

import io.github.sparktfrecord.json.{Json, JsonParser}

import ErrorText._

/**
 * Writes whose files are named and counted at job commit: TensorFlow's sharded names
 * (`shardPrefix`, `numShards`) and TensorFlow Datasets folders (`TFDS.write`, `TFDS.read`),
 * their `dataset_info.json` and `features.json`, and the splits read back.
 */
class TFRecordShardedWriteSuite extends LocalSparkSuite with ShardFiles {
  private def ids(path: String): Seq[Long] =
    spark.read.format("tfrecord").load(path).collect().map(_.getAs[Long]("id")).sorted.toSeq

  private def json(file: File): Json =
    JsonParser.parse(new String(Files.readAllBytes(file.toPath), UTF_8))

  /** Each split's records per shard, from `dataset_info.json`. */
  private def shardLengths(folder: File): Map[String, Seq[Long]] =
    json(new File(folder, "dataset_info.json"))("splits").elements.map { s =>
      s("name").text -> s("shardLengths").elements.map(_.long)
    }.toMap

  test("shardPrefix names the files TensorFlow's way, numbered in the order of the tasks") {
    withTempDir { dir =>
      val out = new File(dir, "three")
      // Three partitions of three ids each: task i writes ids 3i to 3i + 2.
      spark.range(0, 9, 1, 3).write.format("tfrecord").option("shardPrefix", "part")
        .save(out.getPath)
      val names = (0 until 3).map(i => f"part-$i%05d-of-00003")
      assertEquals(visibleFiles(out), names)
      names.zipWithIndex.foreach { case (name, i) =>
        assertEquals(ids(new File(out, name).getPath), Seq(3L * i, 3L * i + 1, 3L * i + 2))
      }
    }
  }

  test("a TFDS split: shards, their counts from the write, its features, and read back") {
    withTempDir { dir =>
      val rows = (0 until 12).map { i =>
        Row(i.toLong, s"text $i é", Seq.tabulate(i % 3)(k => k * 0.5f), Row(s"cam$i", i * 2L))
      }
      val ddl = "id long, text string, vec array<float>, meta struct<source: string, size: long>"
      val folder = TFDS.write(frame(ddl, rows: _*), dir.getPath, "spark_ds", "train",
        numShards = 3)
      assertEquals(folder, s"${dir.getPath}/spark_ds/1.0.0")
      val files = new File(folder)
      val shards = (0 until 3).map(i => s"spark_ds-train.tfrecord-0000$i-of-00003")
      assertEquals(visibleFiles(files).filter(_.contains(".tfrecord-")), shards)
      // The counts in dataset_info.json are the records each shard holds.
      val lengths = shardLengths(files)("train")
      assertEquals(lengths, shards.map(s => countRecords(new File(files, s)).toLong))
      assertEquals(lengths.sum, 12L)

      val features = json(new File(files, "features.json"))("featuresDict")("features")
      def kind(name: String): (String, String) = {
        val f = features(name)
        (f("pythonClassName").text.split('.').last,
          f.field("tensor").map(_("dtype").text).orNull)
      }
      assertEquals(Seq("id", "text", "vec", "meta").map(kind),
        Seq(
          ("Tensor", "int64"), ("Text", null), ("Tensor", "float32"), ("FeaturesDict", null)))
      assertEquals(features("vec")("tensor")("shape").compact,
        """{"dimensions":["-1"]}""")

      val back = TFDS.read(spark, folder, "train")
      assertEquals(back.schema.simpleString,
        "struct<id:bigint,text:string,vec:array<float>," +
          "meta:struct<source:string,size:bigint>>")
      assertEquals(back.collect().sortBy(_.getLong(0)).toSeq, rows)
    }
  }

  test("a second split keeps the folder's features; an existing split needs overwrite") {
    withTempDir { dir =>
      val df = spark.range(0, 30, 1, 3).selectExpr("id", "id * 10 as y")
      val folder = TFDS.write(df, dir.getPath, "ow", "train", numShards = 3)
      val files = new File(folder)
      val featuresBefore = Files.readAllBytes(new File(files, "features.json").toPath).toSeq
      TFDS.write(df.where("id < 5"), dir.getPath, "ow", "test")
      assertEquals(Files.readAllBytes(new File(files, "features.json").toPath).toSeq,
        featuresBefore)
      assertEquals(shardLengths(files).map { case (k, v) => k -> v.sum },
        Map("train" -> 30L, "test" -> 5L))
      val refused = intercept[Exception](TFDS.write(df, dir.getPath, "ow", "train"))
      assert(refused.text.contains("already has the split 'train' (30 records)"), refused.text)
      assertEquals(shardLengths(files)("train"), Seq(10L, 10L, 10L))
      TFDS.write(df.where("id < 8"), dir.getPath, "ow", "train", numShards = 2,
        mode = "overwrite")
      assertEquals(shardLengths(files)("train"), Seq(4L, 4L))
      assertEquals(visibleFiles(files).filter(_.startsWith("ow-train.")),
        Seq("ow-train.tfrecord-00000-of-00002", "ow-train.tfrecord-00001-of-00002"))
      assertEquals(TFDS.read(spark, folder, "train").collect().map(_.getLong(1)).sorted.toSeq,
        (0L until 8L).map(_ * 10))
      assertEquals(TFDS.read(spark, folder, "test").count(), 5L)
      // The folder is read by split: without one, the error lists them.
      val noSplit = intercept[Exception](spark.read.format("tfrecord").load(folder).collect())
      assert(noSplit.text.contains("TensorFlow Datasets folder"), noSplit.text)
      assertEquals(noSplit.text.split("its splits: ")(1).split(')')(0).split(", ").toSet,
        Set("train", "test"))
    }
  }

  test("empty shards and an empty split") {
    withTempDir { dir =>
      val folder = TFDS.write(frame("id long, s string", Row(1L, "a"), Row(2L, "b")),
        dir.getPath, "few", "train", numShards = 5)
      val lengths = shardLengths(new File(folder))("train")
      assertEquals(lengths.length, 5)
      assertEquals(lengths.sum, 2L)
      assert(lengths.count(_ == 0L) >= 3, lengths.toString)
      assertEquals(TFDS.read(spark, folder, "train").collect().map(_.getLong(0)).sorted.toSeq,
        Seq(1L, 2L))
      val zero = TFDS.write(frame("id long, s string"), dir.getPath, "none", "train")
      assertEquals(shardLengths(new File(zero)), Map("train" -> Seq(0L)))
      assertEquals(TFDS.read(spark, zero, "train").count(), 0L)
    }
  }
}
