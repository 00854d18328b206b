package io.github.sparktfrecord

import java.io.{ByteArrayInputStream, DataInputStream}
import java.nio.charset.StandardCharsets.UTF_8

/**
 * [[TFRecordStatistics.figures]] in a session: one job whose tasks' figures the driver merges as
 * they arrive, in the partitions' order, so every partition's rows, sizes, numbers and strings
 * count once and the same figures come whichever task ends first; a failing task fails the call
 * with Spark's error instead of leaving the driver waiting for its figures.
 */
class StatisticsFiguresSuite extends LocalSparkSuite {

  // The numbers' figures as NumberSummary.write has them: 5 counts, 6 doubles, the points.
  private def numbers(in: DataInputStream): (Seq[Long], Seq[Double], Seq[(Double, Long)]) = {
    val counts = Seq.fill(5)(in.readLong())
    val doubles = Seq.fill(6)(in.readDouble())
    val points = in.readInt()
    val values = Seq.fill(points)(in.readDouble())
    (counts, doubles, values.zip(Seq.fill(points)(in.readLong())))
  }

  test("every partition's figures merged in the driver: rows, sizes, numbers, strings") {
    val df = spark.range(0, 10000, 1, 5)
      .selectExpr("CAST(id AS DOUBLE) / 2 AS x", "CAST(id % 100 AS STRING) AS s",
        "IF(id % 2 = 0, array(id, id), array(id)) AS l")
    val in = new DataInputStream(
      new ByteArrayInputStream(TFRecordStatistics.figures(df, "f--", 10)))
    assert(in.readLong() == 10000)
    assert(Seq.fill(in.readInt())(in.readLong()) == Seq(0L, 10000L)) // x: one value a row
    val (counts, doubles, points) = numbers(in)
    assert(counts == Seq(10000L, 0L, 0L, 1L, 10000L))
    assertEqualsDouble(doubles(0), 2499.75, 1e-9)
    assertEqualsDouble(doubles(1), (0 until 10000).map(i => math.pow(i / 2.0 - 2499.75, 2)).sum,
      1e-6)
    assert(doubles.drop(2) == Seq(0.0, 4999.5, 0.0, 4999.5))
    assert(points.map(_._1) == points.map(_._1).sorted) // one run by value
    assert(points.map(_._2).sum == 10000)
    assert(Seq.fill(in.readInt())(in.readLong()) == Seq(0L, 10000L)) // s
    assert(Seq.fill(in.readInt())(in.readLong()) == Seq(0L, 5000L, 5000L)) // l: 1 or 2 values
    assert(numbers(in)._1 == Seq(15000L, 0L, 0L, 2L, 15000L))
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

  test("the same figures whichever task ends first: merged in the partitions' order") {
    // the first partition's task waits for a second, so it likely ends last; equal either way
    def of(wait: Int): Seq[Byte] = TFRecordStatistics.figures(
      spark.range(0, 60000, 1, 6).selectExpr(
        s"IF(id = 0, CAST(reflect('java.lang.Thread', 'sleep', CAST($wait AS BIGINT)) IS NULL " +
          "AS INT), 0) + sin(id) * 1e3 + 0.1 AS x"), "-", 10).toSeq
    assert(of(1000) == of(0))
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
    in.readLong()
    // values, NaN, +inf, zeros, numbers; the mean: of the ids of rows 0 and 1 of every 5
    val ids = (0L until 20000L).filter(_ % 5 <= 1)
    for (t <- Seq("float", "double", "bigint")) {
      Seq.fill(in.readInt())(in.readLong())
      val (counts, doubles, _) = numbers(in)
      val nan = if (t == "bigint") 0L else 4000L
      assertEquals(counts, Seq(36000L + nan, nan, 0L, 4001L, 36000L), t)
      assertEqualsDouble(doubles(0), ids.sum.toDouble / 36000, 1e-9, t)
      assertEquals(doubles.slice(2, 4), Seq(-19999.0, 19999.0), t)
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
