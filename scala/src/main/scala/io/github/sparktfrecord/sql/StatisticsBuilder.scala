package io.github.sparktfrecord.sql

import java.io.{ByteArrayInputStream, DataInputStream}
import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparktfrecord.sql.StatisticsProto._
import io.github.sparktfrecord.wire.Utf8

/**
 * TFDV's `DatasetFeatureStatistics` from the jar's figures ([[StatisticsAggregator.figures]]),
 * step for step as the Python side builds it from the same figures (`statistics.py`,
 * `statistics_partials.merged_parts`): the two give the same bytes, which the suite checks.
 */
private[sparktfrecord] object StatisticsBuilder {

  /** TFDV's default `StatsOptions`: buckets of the histograms, top values, rank buckets. */
  final val NumValuesBuckets = 10
  final val HistogramBuckets = 10
  final val TopValues = 20
  final val RankBuckets = 1000

  /** TFDV takes the standard histogram and the median from 100 times finer quantiles. */
  final val Fine = 100 * HistogramBuckets

  /** A feature: its name and TFDV type ([[StatisticsProto.IntType]], ...). */
  final case class Column(name: String, kind: Int)

  /** The dataset named `name` from `columns`' figures (a string column's with its top values). */
  def dataset(figures: Array[Byte], columns: Seq[Column], name: String): Dataset = {
    val in = new DataInputStream(new ByteArrayInputStream(figures))
    val examples = in.readLong()
    val read = columns.map { c =>
      val sizes = Array.fill(in.readInt())(in.readLong())
      (c, sizes, if (c.kind == StringType) None else Some(numbers(in)))
    }
    val features = read.flatMap { case (c, sizes, numbers) =>
      val common = this.common(sizes, examples)
      val strings = if (c.kind == StringType) Some(this.strings(in, common.totNumValues)) else None
      if (common.numNonMissing == 0) None // the jar writes no feature null in every row
      else Some(Feature(Seq(c.name), c.kind, common, numbers.map(numeric), strings))
    }
    Dataset(examples, features, name)
  }

  /** A column's numbers as [[NumberSummary.write]] wrote them. */
  private final case class Numbers(
      values: Long, nan: Long, posInf: Long, zeros: Long, n: Long, mean: Double, m2: Double,
      min: Double, max: Double, finiteMin: Double, finiteMax: Double, points: Array[Double],
      weights: Array[Long])

  private def numbers(in: DataInputStream): Numbers = {
    val counts = Array.fill(5)(in.readLong())
    val doubles = Array.fill(6)(in.readDouble())
    val k = in.readInt()
    val points = Array.fill(k)(in.readDouble())
    Numbers(counts(0), counts(1), counts(2), counts(3), counts(4), doubles(0), doubles(1),
      doubles(2), doubles(3), doubles(4), doubles(5), points, Array.fill(k)(in.readLong()))
  }

  /** Presence and numbers of values, from how many rows hold 0, 1, 2, ... values. */
  private def common(sizes: Array[Long], examples: Long): Common = {
    val present = sizes.sum
    if (present == 0) return Common(0, examples)
    val held = sizes.indices.filter(sizes(_) != 0)
    val total = sizes.indices.map(k => k * sizes(k)).sum
    val cumulative = sizes.scanLeft(0L)(_ + _).tail
    val q = (0 to NumValuesBuckets).map { k =>
      val rank = math.max(1.0, math.ceil(k.toDouble / NumValuesBuckets * present))
      reaching(cumulative, rank).toDouble
    }
    Common(present, examples - present, held.head, held.last, total.toDouble / present, total,
      Some(StatisticsHistograms.quantilesHistogram(q,
        StatisticsHistograms.cumulative(q, present.toDouble))))
  }

  /** The first place where ascending `cumulative` reaches `rank` (NumPy's `searchsorted`). */
  private def reaching(cumulative: Array[Long], rank: Double): Int = {
    var (lo, hi) = (0, cumulative.length)
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (cumulative(mid) < rank) lo = mid + 1 else hi = mid
    }
    lo
  }

  /** The numbers' figures and histograms, as TFDV's. */
  private def numeric(x: Numbers): Numeric = {
    val total = x.values - x.nan // (a list column of empty lists has no number)
    if (total == 0) {
      val onlyNaN =
        if (x.nan == 0) Nil
        else Seq(Histogram(Nil, Standard, x.nan), Histogram(Nil, Quantiles, x.nan))
      return Numeric(histograms = onlyNaN)
    }
    val variance = x.m2 / x.n
    // the quantiles at the fine grid's ranks: the first number whose cumulative weight reaches
    val cumulative = x.weights.scanLeft(0L)(_ + _).tail
    val q = (0 to Fine).map { k =>
      if (k == 0) x.min
      else if (k == Fine) x.max
      else x.points(math.min(reaching(cumulative, k.toDouble / Fine * x.n), x.points.length - 1))
    }
    val finiteMin = if (x.finiteMin.isNaN) Double.PositiveInfinity else x.finiteMin
    val finiteMax = if (x.finiteMax.isNaN) Double.NegativeInfinity else x.finiteMax
    val (median, histograms) = StatisticsHistograms.numericHistograms(
      q, total.toDouble, finiteMin, finiteMax, x.posInf.toDouble, x.nan, HistogramBuckets)
    Numeric(
      // TFDV's running mean takes inf - inf once an infinity is in: NaN, whatever the sign
      mean = if (java.lang.Double.isFinite(x.mean)) x.mean else Double.NaN,
      stdDev = if (variance > 0) math.sqrt(variance) else 0.0,
      numZeros = x.zeros,
      min = x.min,
      median = median,
      max = x.max,
      histograms = histograms)
  }

  /** A string column's figures ([[StringCounts.writeFigures]]): unique, lengths, top values. */
  private def strings(in: DataInputStream, totalValues: Long): Strings = {
    val (unique, length, invalid) = (in.readLong(), in.readLong(), in.readLong())
    val top = Seq.fill(in.readInt()) {
      val bytes = new Array[Byte](in.readInt())
      in.readFully(bytes)
      (label(bytes), in.readLong().toDouble)
    }
    val strings = Strings(topValues = top.take(TopValues), rank = top.take(RankBuckets))
    if (totalValues == 0) strings
    else strings.copy(unique = unique, invalidUtf8 = invalid,
      avgLength = length.toDouble / totalValues)
  }

  /** A top value as TFDV labels it: its text, or `__BYTES_VALUE__` if it is not UTF-8. */
  private def label(bytes: Array[Byte]): String =
    if (Utf8.isValid(bytes, 0, bytes.length)) new String(bytes, UTF_8) else "__BYTES_VALUE__"
}
