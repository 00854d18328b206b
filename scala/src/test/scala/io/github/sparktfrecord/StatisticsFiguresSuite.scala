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
    for (_ <- 0 until partitions) {
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

  test("a failing task fails the call") {
    val df = spark.range(0, 300, 1, 3).selectExpr("IF(id = 250, raise_error('bad row'), id) AS x")
    // the task's error as collect() throws it: Spark 3.5's SparkException, 4's the task's own
    val e = intercept[Exception](TFRecordStatistics.figures(df, "-", 10))
    assert(e.getMessage.contains("bad row"), e)
  }
}
