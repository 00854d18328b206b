package io.github.sparktfrecord

import java.io.{ByteArrayInputStream, DataInputStream}
import java.nio.charset.StandardCharsets.UTF_8

/**
 * [[TFRecordStatistics.figures]] in a session: one job whose tasks' figures the driver merges as
 * they arrive, so every partition's rows and sizes are there once, and the strings counted over
 * all of them; a failing task fails the call with Spark's error instead of leaving the driver
 * waiting for its figures.
 */
class StatisticsFiguresSuite extends LocalSparkSuite {

  test("every partition's figures once, the strings merged across them") {
    val df = spark.range(0, 10000, 1, 5)
      .selectExpr("CAST(id AS DOUBLE) / 2 AS x", "CAST(id % 100 AS STRING) AS s",
        "array(id, id) AS l")
    val in = new DataInputStream(
      new ByteArrayInputStream(TFRecordStatistics.figures(df, "f--", 10)))
    val partitions = in.readInt()
    assert(partitions == 5)
    var rows = 0L
    val indices = Seq.newBuilder[Int]
    for (_ <- 0 until partitions) {
      indices += in.readInt()
      rows += in.readLong()
      for (column <- 0 until 3) {
        val sizes = Seq.fill(in.readInt())(in.readLong())
        if (column != 1) { // x and l: numbers; s: counted in the driver
          val counts = Seq.fill(5)(in.readLong())
          assert(counts.head == sizes.zipWithIndex.map { case (n, k) => n * k }.sum)
          Seq.fill(6)(in.readDouble())
          val points = in.readInt()
          Seq.fill(points)(in.readDouble())
          Seq.fill(points)(in.readLong())
        }
      }
    }
    assert(rows == 10000)
    assertEquals(indices.result().sorted, 0 until 5) // each partition once, by its index
    assert((in.readLong(), in.readLong(), in.readLong()) == ((100L, 19000L, 0L)))
    val top = Seq.fill(in.readInt()) {
      val bytes = new Array[Byte](in.readInt())
      in.readFully(bytes)
      (new String(bytes, UTF_8), in.readLong())
    }
    // 100 of each; ties: the larger bytes first
    assert(top == (90 to 99).reverse.map(k => (k.toString, 100L)))
    assert(in.available() == 0)
  }

  test("lists' numbers, copied a run at a time or one by one where a null is among them") {
    // per 5 rows: [NaN or null, id], [id, null, 0], then three of [id, -id]
    val df = spark.range(0, 20000, 1, 2).selectExpr(
      Seq("FLOAT", "DOUBLE", "BIGINT").map { t =>
        val first = if (t == "BIGINT") "NULL" else s"CAST('NaN' AS $t)"
        s"CASE id % 5 WHEN 0 THEN array($first, CAST(id AS $t)) " +
          s"WHEN 1 THEN array(CAST(id AS $t), NULL, CAST(0 AS $t)) " +
          s"ELSE array(CAST(id AS $t), CAST(-id AS $t)) END AS $t"
      }: _*)
    val in = new DataInputStream(
      new ByteArrayInputStream(TFRecordStatistics.figures(df, "-f-", 10)))
    val partitions = in.readInt()
    val counts = Array.fill(3)(new Array[Long](5))
    val sums = new Array[Double](3)
    val extremes = Array.fill(3)(Array(Double.PositiveInfinity, Double.NegativeInfinity))
    for (_ <- 0 until partitions) {
      in.readInt()
      in.readLong()
      for (column <- 0 until 3) {
        Seq.fill(in.readInt())(in.readLong())
        val got = Seq.fill(5)(in.readLong())
        for (k <- 0 until 5) counts(column)(k) += got(k)
        val Seq(mean, _, low, high, _, _) = Seq.fill(6)(in.readDouble())
        sums(column) += mean * got(4)
        extremes(column)(0) = math.min(extremes(column)(0), low)
        extremes(column)(1) = math.max(extremes(column)(1), high)
        val points = in.readInt()
        Seq.fill(points * 2)(in.readLong())
      }
    }
    // values, NaN, +inf, zeros, numbers; the sum: the ids of rows 0 and 1 of every 5
    val (nans, sum) = (4000L, (0L until 20000L).filter(_ % 5 <= 1).sum.toDouble)
    for ((column, t) <- Seq(0 -> "float", 1 -> "double", 2 -> "bigint")) {
      val nan = if (t == "bigint") 0L else nans
      val expected = Seq(36000L + nan, nan, 0L, 4001L, 36000L)
      assertEquals(counts(column).toSeq, expected, t)
      assertEqualsDouble(sums(column), sum, 1e-6 * sum, t)
      assertEquals(extremes(column).toSeq, Seq(-19999.0, 19999.0), t)
    }
    assert(in.available() == 0)
  }

  test("a failing task fails the call") {
    val df = spark.range(0, 300, 1, 3).selectExpr("IF(id = 250, raise_error('bad row'), id) AS x")
    // the task's error as collect() throws it: Spark 3.5's SparkException, 4's the task's own
    val e = intercept[Exception](TFRecordStatistics.figures(df, "-", 10))
    assert(e.getMessage.contains("bad row"), e)
  }
}
