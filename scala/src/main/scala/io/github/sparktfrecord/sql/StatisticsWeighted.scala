package io.github.sparktfrecord.sql

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col, expr, row_number, sum}

import io.github.sparktfrecord.sql.StatisticsFeatures.{quote, Column}
import io.github.sparktfrecord.sql.StatisticsProto._

/**
 * TFDV's weighted statistics (`StatsOptions(weight_feature=...)`): Spark SQL's aggregates of the
 * values and their rows' weights, in one job of their own, and the weighted figures built from
 * them; the query and the figures of the Python side's `statistics_weighted`, which give the same
 * bytes (the suite checks).
 */
private[sparktfrecord] object StatisticsWeighted {

  /** TFDV's `weighted_frequency_threshold`: a value weighing less is no weighted top value. */
  final val WeightedFrequencyThreshold = 1.0

  /** Values are ranked per hash part first (sorts in parallel), then the parts' tops together. */
  final val RankParts = 16

  private final val Inf = "CAST('Infinity' AS DOUBLE)"

  /**
   * The weighted aggregates: per column (and at -1, the rows' total weight `w_present` and how
   * many rows have one, `w_count`) its named figures; per numeric column the values where the
   * cumulative weight crosses a quantile step (`wq`, `wq_cum`, `wq_total`); per string column its
   * top values by weight (`wtop`, `ws`, `wrank`).
   */
  final case class Weighed(
      figures: Map[Int, Map[String, Any]],
      quantiles: Map[Int, Seq[Row]],
      top: Map[Int, Seq[Row]]) {
    def figure(i: Int, name: String): Double =
      figures.getOrElse(i, Map.empty).get(name).map(x => x.asInstanceOf[Number].doubleValue)
        .getOrElse(0.0)
  }

  /** SQL of a row's weight as the record holds it; refused unless one number per row. */
  def weightSql(columns: Seq[Column], weight: String): String = {
    val column = columns.find(_.name == weight).getOrElse(throw new IllegalArgumentException(
      s"statistics: weight '$weight' is none of the features: " +
        columns.map(c => s"'${c.name}'").mkString(", ")))
    if (column.kind == StringType || column.values.nonEmpty) {
      val holds = if (column.kind == StringType) "strings" else "lists"
      throw new IllegalArgumentException(s"statistics: weight column '$weight' holds $holds; " +
        "TFDV's weight feature holds exactly one number in every example")
    }
    s"CAST(${column.value.replace("{x}", quote(weight))} AS DOUBLE)"
  }

  /** The `top` values `s` of each `f` by `count` (ties: larger first), as `rank`. */
  private def ranked(counts: DataFrame, count: String, top: Int): DataFrame = {
    val order = Seq(col(count).desc, col("s").desc)
    val part = expr(s"pmod(xxhash64(s), $RankParts)")
    counts
      .withColumn("rank", row_number().over(Window.partitionBy(col("f"), part).orderBy(order: _*)))
      .where(s"rank <= $top")
      .withColumn("rank", row_number().over(Window.partitionBy("f").orderBy(order: _*)))
      .where(s"rank <= $top")
  }

  /** SQL: the column's values as (place, value, weight) structs, none where it is null. */
  private def withWeights(i: Int, column: Column, w: String): String = {
    val c = quote(column.name)
    val (places, listed, weights) =
      if (column.values.nonEmpty) {
        (s"array_repeat($i, size($c))", column.values.replace("{x}", c),
          s"array_repeat($w, size($c))")
      } else {
        val to = if (column.kind == StringType) "BINARY" else "DOUBLE"
        (s"array($i)", s"array(CAST(${column.value.replace("{x}", c)} AS $to))", s"array($w)")
      }
    s"coalesce(CASE WHEN $c IS NOT NULL THEN arrays_zip($places, $listed, $weights) END, array())"
  }

  /** A row per column of its weighted presence and values; `f` -1: total weight and count. */
  private def presence(df: DataFrame, columns: Seq[Column], w: String): DataFrame = {
    def row(i: Int, present: String, tot: String, count: String) =
      s"named_struct('f', $i, 'w_present', CAST($present AS DOUBLE), " +
        s"'w_tot', CAST($tot AS DOUBLE), 'w_count', CAST($count AS BIGINT))"
    val rows = row(-1, s"sum($w)", "NULL", s"count($w)") +: columns.zipWithIndex.map {
      case (column, i) =>
        val c = quote(column.name)
        val n = if (column.values.nonEmpty) s"size($c)" else "1"
        def present(x: String) = s"CASE WHEN $c IS NOT NULL THEN $x END"
        row(i, s"sum(${present(w)})", s"sum(${present(s"$n * $w")})", "NULL")
    }
    df.agg(expr(s"array(${rows.mkString(", ")})").as("r")).selectExpr("inline(r)")
  }

  /** The weighted parts of the query: `fine` quantile steps, `top` strings by weight. */
  private def parts(df: DataFrame, columns: Seq[Column], w: String, fine: Int, top: Int)
      : Seq[DataFrame] = {
    val out = Seq.newBuilder[DataFrame]
    out += presence(df, columns, w)
    val indexed = columns.zipWithIndex
    val numbers = indexed.collect { case (c, i) if c.kind != StringType => withWeights(i, c, w) }
    if (numbers.nonEmpty) {
      val values = df.selectExpr(s"inline(concat(${numbers.mkString(", ")}))").toDF("f", "d", "w")
      def number(x: String) = s"CASE WHEN NOT isnan(d) THEN $x END"
      out += values.groupBy("f").agg(
        expr(s"sum(${number("w")})").as("w_values"),
        expr(s"sum(${number("w * d")})").as("w_sum"),
        expr(s"sum(${number("w * d * d")})").as("w_sq"),
        expr(s"sum(CASE WHEN d = $Inf THEN w ELSE 0 END)").as("w_pos_inf"))
      // Exact weighted quantiles: values where the cumulative weight crosses a step (a superset).
      val byValue = values.where("NOT isnan(d) AND w > 0").groupBy("f", "d").agg(sum("w").as("w"))
      val cum = sum("w").over(
        Window.partitionBy("f").orderBy("d").rowsBetween(Window.unboundedPreceding, 0))
      val steps = byValue.withColumn("wq_cum", cum)
        .withColumn("wq_total", sum("w").over(Window.partitionBy("f")))
      val crossing = s"floor(wq_cum * $fine / wq_total + 1e-7) > " +
        s"floor((wq_cum - w) * $fine / wq_total - 1e-7)"
      out += steps.where(crossing).select(col("f"), col("d").as("wq"), col("wq_cum"),
        col("wq_total"))
    }
    val strings = indexed.collect { case (c, i) if c.kind == StringType => withWeights(i, c, w) }
    if (strings.nonEmpty) {
      val values = df.selectExpr(s"inline(concat(${strings.mkString(", ")}))").toDF("f", "s", "w")
      val weights = values.groupBy("f", "s").agg(sum("w").as("ws"))
      out += ranked(weights, "ws", top).select(col("f"), col("s").as("wtop"), col("ws"),
        col("rank").as("wrank"))
    }
    out.result()
  }

  /** The weighted aggregates of `df`'s `columns` by the weight `w` (SQL): one job. */
  def weighed(df: DataFrame, columns: Seq[Column], w: String, fine: Int, top: Int): Weighed = {
    val rows = parts(df, columns, w, fine, top)
      .reduce((a, b) => a.unionByName(b, allowMissingColumns = true)).collect()
    // (a part's column is in the union's rows if the part is: "wq" only with numeric columns)
    def has(r: Row, name: String) = r.schema.fieldNames.contains(name) && !r.isNullAt(
      r.fieldIndex(name))
    val f = (r: Row) => r.getAs[Number]("f").intValue
    val (quantiles, rest) = rows.partition(has(_, "wq"))
    val (top_, aggregates) = rest.partition(has(_, "wtop"))
    val figures = aggregates.groupBy(f).map { case (i, found) =>
      i -> found.flatMap(r =>
        r.schema.fieldNames.filter(n => n != "f" && has(r, n))
          .map(n => n -> r.getAs[Any](n))).toMap
    }
    Weighed(figures, quantiles.toSeq.groupBy(f), top_.toSeq.groupBy(f))
  }

  /** The weighted quantiles at `fine` steps, and the total weight, from the crossing rows. */
  private def quantiles(found: Seq[Row], fine: Int): (IndexedSeq[Double], Double) = {
    val sorted = found.sortBy(_.getAs[Double]("wq"))
    val total = sorted.head.getAs[Double]("wq_total")
    var j = 0
    val q = (0 to fine).map { k =>
      val target = total * k / fine
      while (j < sorted.length - 1 && sorted(j).getAs[Double]("wq_cum") < target * (1 - 1e-12)) {
        j += 1
      }
      sorted(j).getAs[Double]("wq")
    }
    (q, total)
  }

  /** A column's weighted presence, the rows' total weight `totalWeight`. */
  def common(weighed: Weighed, i: Int, totalWeight: Double): WeightedCommon = {
    val (present, tot) = (weighed.figure(i, "w_present"), weighed.figure(i, "w_tot"))
    WeightedCommon(present, totalWeight - present, if (present != 0) tot / present else 0.0, tot)
  }

  /** A column's weighted numbers; `numbers` its figures (NaN count, finite extremes). */
  def numeric(weighed: Weighed, i: Int, numbers: NumberSummary.Written, buckets: Int, fine: Int)
      : WeightedNumeric = {
    val weight = weighed.figure(i, "w_values")
    val mean = if (weight != 0) weighed.figure(i, "w_sum") / weight else Double.NaN
    val variance = if (weight != 0) weighed.figure(i, "w_sq") / weight - mean * mean else Double.NaN
    val numeric = WeightedNumeric(
      // TFDV's running mean takes inf - inf once an infinity is in: NaN, whatever the sign
      mean = if (java.lang.Double.isFinite(mean)) mean else Double.NaN,
      stdDev = if (variance > 0) math.sqrt(variance) else 0.0, median = 0.0, histograms = Nil)
    weighed.quantiles.get(i) match {
      case Some(found) if found.nonEmpty =>
        val (q, total) = quantiles(found, fine)
        val (finiteMin, finiteMax) = numbers.finiteRange
        val (median, histograms) = StatisticsHistograms.numericHistograms(q, total, finiteMin,
          finiteMax, weighed.figure(i, "w_pos_inf"), numbers.nan, buckets)
        numeric.copy(median = median, histograms = histograms)
      case _ => numeric
    }
  }

  /** A string column's weighted top values and rank histogram; `label`: a value's text. */
  def top(weighed: Weighed, i: Int, label: Array[Byte] => String, top: Int, buckets: Int)
      : (Counted, Counted) = {
    val found = weighed.top.getOrElse(i, Nil).sortBy(_.getAs[Number]("wrank").intValue)
    val counted = found.map(r => (label(r.getAs[Array[Byte]]("wtop")), r.getAs[Double]("ws")))
      .filter(_._2 >= WeightedFrequencyThreshold)
    (counted.take(top), counted.take(buckets))
  }
}
