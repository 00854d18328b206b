package io.github.sparktfrecord

import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder.LITTLE_ENDIAN
import java.nio.file.Files
import java.util.concurrent.atomic.AtomicReference

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning
import org.apache.spark.sql.execution.{CommandResultExec, QueryExecution, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike
import org.apache.spark.sql.util.QueryExecutionListener

import ErrorText._

import io.github.sparktfrecord.framing.TFRecordFraming
import io.github.sparktfrecord.tfds.TFRecordShards

/** The records of uncompressed files and the files of a folder, for the two suites below. */
trait ShardFiles { this: LocalSparkSuite =>

  /** The records of an uncompressed file, counted by their framing alone. */
  protected def countRecords(file: File): Int = {
    val bytes = ByteBuffer.wrap(Files.readAllBytes(file.toPath)).order(LITTLE_ENDIAN)
    var n = 0
    while (bytes.hasRemaining) {
      val length = bytes.getLong(bytes.position())
      bytes.position(bytes.position() + TFRecordFraming.OverheadBytes + length.toInt)
      n += 1
    }
    n
  }

  /** The data files of a write, in task (shard) order. */
  protected def shards(dir: File): Seq[File] = visibleFiles(dir).map(new File(dir, _))

  /** The `id`s of each shard, in the file's order. */
  protected def idsByShard(dir: File): Seq[Seq[Long]] = shards(dir).map { f =>
    if (f.length == 0) Nil
    else spark.read.format("tfrecord").load(f.getPath).collect().map(_.getAs[Long]("id")).toSeq
  }
}

/**
 * Balanced, shuffled shards from Scala: `numShards` and `shuffleSeed` as options of the data
 * source (arranged by `TFRecordShardsRule`, which the session's extensions install), and
 * `TFDS.write` with `shuffleSeed`.
 */
class TFRecordShardsSuite extends LocalSparkSuite with ShardFiles with AdaptiveSparkPlanHelper {

  /** 900 rows in one partition, 100 in five more. */
  private def skewed: DataFrame = spark.range(0, 900, 1, 1).union(spark.range(900, 1000, 1, 5))
    .selectExpr("id", "cast(id * 3 as string) as s")

  private def write(df: DataFrame, dir: File, numShards: Int, seed: Option[Long]): Unit = {
    val writer = df.write.format("tfrecord").option("numShards", numShards)
    seed.fold(writer)(s => writer.option("shuffleSeed", s)).save(dir.getPath)
  }

  private def bytes(dir: File): Seq[Seq[Byte]] =
    shards(dir).map(f => Files.readAllBytes(f.toPath).toSeq)

  /** The physical plan of the write `body` runs (as Spark's listeners see it). */
  private def writePlan(body: => Unit): SparkPlan = {
    val seen = new AtomicReference[QueryExecution]()
    val listener = new QueryExecutionListener {
      override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit =
        if (funcName == "save" || funcName == "command") seen.compareAndSet(null, qe)
      override def onFailure(funcName: String, qe: QueryExecution, e: Exception): Unit = ()
    }
    spark.listenerManager.register(listener)
    try {
      body
      val deadline = System.currentTimeMillis() + 20000
      while (seen.get == null && System.currentTimeMillis() < deadline) Thread.sleep(20)
    } finally spark.listenerManager.unregister(listener)
    assert(seen.get != null, "no write reached the listener")
    seen.get.executedPlan match {
      case c: CommandResultExec => c.commandPhysicalPlan
      case p => p
    }
  }

  /** The shuffles of `plan`, as (number of partitions, whether by the route column). */
  private def shuffles(plan: SparkPlan): Seq[(Int, Boolean)] =
    collect(plan) { case s: ShuffleExchangeLike => s.outputPartitioning }.map {
      case h: HashPartitioning =>
        h.numPartitions -> h.expressions.exists(_.references.exists(
          _.name.endsWith(TFRecordShards.RouteColumn)))
      case p => p.numPartitions -> false
    }

  test("numShards from the options: counts within one, fewer and more shards than partitions") {
    withTempDir { dir =>
      for (n <- Seq(3, 8)) {
        val out = new File(dir, s"n$n")
        write(skewed, out, n, None)
        val ids = idsByShard(out)
        // Without a seed, row i of the input's order goes to shard i % n, in that order.
        assertEquals(ids, (0 until n).map(s => (s.toLong until 1000L by n.toLong).toSeq))
        assertEquals(shards(out).map(countRecords), ids.map(_.size))
      }
    }
  }

  test("more shards than rows: the last ones are empty") {
    withTempDir { dir =>
      val out = new File(dir, "five")
      write(spark.range(0, 3, 1, 2).toDF(), out, 5, Some(1L))
      assertEquals(shards(out).map(countRecords), Seq(1, 1, 1, 0, 0))
      assertEquals(idsByShard(out).flatten.sorted, Seq(0L, 1L, 2L))
    }
  }

  test("shuffleSeed: the same bytes from any partitioning, another seed another order") {
    withTempDir { dir =>
      val inputs = Seq(skewed.repartition(3), skewed.coalesce(1), skewed.repartition(7), skewed)
      inputs.zipWithIndex.foreach { case (df, i) => write(df, new File(dir, s"in$i"), 3, Some(7)) }
      val first = bytes(new File(dir, "in0"))
      assertEquals(first.size, 3)
      (1 until inputs.size).foreach(i => assert(bytes(new File(dir, s"in$i")) == first, s"in$i"))
      val ids = idsByShard(new File(dir, "in0"))
      assertEquals(ids.map(_.size), Seq(334, 333, 333))
      assertEquals(ids.flatten.sorted, (0L until 1000L))
      assert(ids.head != ids.head.sorted, "the rows are shuffled")
      // The values, not only the ids, are those of the rows.
      val read = spark.read.format("tfrecord").load(new File(dir, "in0").getPath)
      assertEquals(read.selectExpr("count(*)", "sum(cast(s = cast(id * 3 as string) as int))")
          .collect().head.toSeq, Seq[Any](1000L, 1000L))
      write(skewed, new File(dir, "other"), 3, Some(8))
      val other = idsByShard(new File(dir, "other"))
      assertEquals(other.map(_.size), Seq(334, 333, 333))
      assert(other != ids, "another seed, another order")
    }
  }

  test("the write arranges once: one shuffle into numShards partitions by the route column") {
    withTempDir { dir =>
      val seeded = writePlan(write(skewed, new File(dir, "seeded"), 3, Some(7)))
      // The window's shuffle (by key bucket) and the route's.
      assertEquals(shuffles(seeded).filter(_._2), Seq(3 -> true))
      assertEquals(shuffles(seeded).size, 2)
      val plain = writePlan(write(skewed, new File(dir, "plain"), 4, None))
      assertEquals(shuffles(plain), Seq(4 -> true))
      // Arranged already (as Python's write and TFDS.write do): not arranged again.
      val before = TFRecordShards.arrange(skewed, 3, Some(7L))
      val again = writePlan(write(before, new File(dir, "again"), 3, None))
      assertEquals(shuffles(again).filter(_._2), Seq(3 -> true))
      assertEquals(shuffles(again).size, 2)
      assertEquals(bytes(new File(dir, "again")), bytes(new File(dir, "seeded")))
      val unseeded = TFRecordShards.arrange(skewed, 4, None)
      val plainAgain = writePlan(write(unseeded, new File(dir, "plainAgain"), 4, None))
      assertEquals(shuffles(plainAgain), Seq(4 -> true))
      assertEquals(bytes(new File(dir, "plainAgain")), bytes(new File(dir, "plain")))
      // Rows filtered after the arrangement (Spark pushes the filter down to the numbering)
      // are no arrangement: arranged again, and balanced.
      val filtered = before.where("id % 3 = 0")
      val twice = writePlan(write(filtered, new File(dir, "filtered"), 3, None))
      assertEquals(shuffles(twice).count(_._2), 2)
      assertEquals(shards(new File(dir, "filtered")).map(countRecords), Seq(112, 111, 111))
    }
  }

  test("shuffleSeed: bad values and partitionBy fail when the write is planned") {
    withTempDir { dir =>
      val df = spark.range(10).selectExpr("id", "id % 2 as p")
      val noShards = intercept[IllegalArgumentException] {
        df.write.format("tfrecord").option("shuffleSeed", "7").save(new File(dir, "a").getPath)
      }
      assert(noShards.text.contains("Invalid value '7' for TFRecord option 'shuffleSeed'"),
        noShards.text)
      val bad = intercept[IllegalArgumentException] {
        df.write.format("tfrecord").option("numShards", "2").option("shuffleSeed", "x")
          .save(new File(dir, "b2").getPath)
      }
      assert(bad.text.contains("Valid values: a 64-bit integer"), bad.text)
      val partitioned = intercept[IllegalArgumentException] {
        df.write.format("tfrecord").option("numShards", "2").option("shuffleSeed", "1")
          .partitionBy("p").save(new File(dir, "c").getPath)
      }
      assert(partitioned.text.contains("cannot be partitioned (partitionBy)"), partitioned.text)
      assertEquals(visibleFiles(new File(dir, "b2")), Nil)
    }
  }

  test("TFDS.write with shuffleSeed: balanced shards, the same for the same seed") {
    withTempDir { dir =>
      val a = TFDS.write(skewed, dir.getPath, "shuffled", "train", numShards = 4,
        shuffleSeed = Some(3L))
      val b = TFDS.write(skewed.repartition(5), dir.getPath, "shuffled", "test", numShards = 4,
        shuffleSeed = Some(3L))
      def split(folder: String, name: String): Seq[File] =
        shards(new File(folder)).filter(_.getName.startsWith(s"shuffled-$name.tfrecord-"))
      val train = split(a, "train")
      assertEquals(train.map(countRecords), Seq(250, 250, 250, 250))
      assertEquals(train.map(f => Files.readAllBytes(f.toPath).toSeq),
        split(b, "test").map(f => Files.readAllBytes(f.toPath).toSeq))
      assertEquals(TFDS.read(spark, a, "train").collect().map(_.getAs[Long]("id")).sorted.toSeq,
        (0L until 1000L))
      val error = intercept[IllegalArgumentException] {
        TFDS.write(skewed, dir.getPath, "shuffled", "x", shuffleSeed = Some(3L))
      }
      assert(error.text.contains("give numShards too"), error.text)
    }
  }

  test("the routing keys: the smallest integer Spark's hash sends to each partition") {
    // pmod(hash(k), n) for k = 0, 1, 2, ... as Spark's SQL computes it.
    for (n <- Seq(1, 3, 16)) {
      val keys = TFRecordShards.routingKeys(n).toSeq
      val partitions = spark.range(0, 200).selectExpr("id", s"pmod(hash(cast(id as int)), $n)")
        .collect().map(r => r.getLong(0).toInt -> r.getInt(1))
      val first = partitions.groupBy(_._2).map { case (p, ks) => p -> ks.map(_._1).min }
      assertEquals(keys, (0 until n).map(first))
    }
  }
}

/** Without the session extensions: `numShards` only counts, and `shuffleSeed` is refused. */
class TFRecordShardsWithoutExtensionsSuite extends LocalSparkSuite with ShardFiles {
  override protected def withExtensions: Boolean = false

  test("numShards only counts: empty shards up to it, a write with more files fails") {
    withTempDir { dir =>
      val out = new File(dir, "sixteen")
      spark.range(0, 10, 1, 2).write.format("tfrecord").option("shardPrefix", "train")
        .option("numShards", "16").save(out.getPath)
      val names = (0 until 16).map(i => f"train-$i%05d-of-00016")
      assertEquals(visibleFiles(out), names)
      assertEquals(names.map(n => countRecords(new File(out, n))), Seq(5, 5) ++ Seq.fill(14)(0))
      val over = new File(dir, "over")
      val error = intercept[Exception] {
        spark.range(0, 10, 1, 3).write.format("tfrecord").option("shardPrefix", "x")
          .option("numShards", "2").save(over.getPath)
      }
      assert(messages(error).contains("produced 3 files, more than its numShards 2"),
        messages(error))
      assertEquals(visibleFiles(over), Nil)
    }
  }

  test("shuffleSeed fails when the write is planned, saying how to enable it") {
    withTempDir { dir =>
      val out = new File(dir, "seeded")
      val error = intercept[IllegalArgumentException] {
        spark.range(10).write.format("tfrecord").option("numShards", "2")
          .option("shuffleSeed", "7").save(out.getPath)
      }
      assert(error.text.contains("The option 'shuffleSeed' needs the session extensions"),
        error.text)
      assert(error.text.contains(
          "spark.sql.extensions=io.github.sparktfrecord.TFRecordExtensions"), error.text)
      assertEquals(visibleFiles(out), Nil)
    }
  }

  test("arranged by TFRecordShards.arrange, a write is balanced without the extensions") {
    withTempDir { dir =>
      val out = new File(dir, "arranged")
      val df = spark.range(0, 100, 1, 1).union(spark.range(100, 110, 1, 3)).toDF()
      TFRecordShards.arrange(df, 4, Some(5L)).write.format("tfrecord").option("numShards",
        "4").save(out.getPath)
      assertEquals(shards(out).map(countRecords), Seq(28, 28, 27, 27))
      assertEquals(idsByShard(out).flatten.sorted, (0L until 110L))
    }
  }
}
