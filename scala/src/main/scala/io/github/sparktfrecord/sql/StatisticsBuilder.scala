package io.github.sparktfrecord.sql

import java.io.{ByteArrayInputStream, DataInputStream}
import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparktfrecord.sql.StatisticsFeatures.Column
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

  /**
   * The dataset named `name` from `columns`' figures (a string column's with its top values):
   * with `weighed` (the weight column's name and [[StatisticsWeighted.weighed]] by it), its
   * weighted figures too; each of `lists` (SequenceExample's feature lists, a column of values and
   * one of the steps' lengths) made one feature under [[StatisticsFeatures.Sequence]].
   */
  def dataset(
      figures: Array[Byte],
      columns: Seq[Column],
      name: String,
      lists: Seq[String] = Nil,
      weighed: Option[(String, StatisticsWeighted.Weighed)] = None): Dataset = {
    val in = new DataInputStream(new ByteArrayInputStream(figures))
    val examples = in.readLong()
    val read = columns.map { c =>
      val sizes = Array.fill(in.readInt())(in.readLong())
      (c, sizes, if (c.kind == StringType) None else Some(NumberSummary.readWritten(in)))
    }
    val commons = read.map { case (_, sizes, _) => common(sizes, examples) }
    val strings = read.zip(commons).map { case ((c, _, _), common) =>
      if (c.kind == StringType) Some(this.strings(in, common.totNumValues)) else None
    }
    val totalWeight = weighed.map { case (weight, w) =>
      if (w.figure(-1, "w_count") != examples) throw new IllegalArgumentException(
        s"statistics: weight column '$weight' is null in some rows; TFDV's weight feature " +
          "holds exactly one number in every example")
      refuseUnweighable(columns, read.map(_._3), w, weight)
      w.figure(-1, "w_present")
    }
    val features = read.indices.flatMap { i =>
      val (c, _, numbers) = read(i)
      if (commons(i).numNonMissing == 0) None // the jar writes no feature null in every row
      else {
        val feature = Feature(Seq(c.name), c.kind, commons(i), numbers.map(numeric), strings(i))
        Some(weighed.fold(feature) { case (_, w) =>
          weigh(feature, i, numbers, w, totalWeight.get)
        })
      }
    }
    val dataset = Dataset(examples, features, name, totalWeight)
    if (lists.isEmpty) dataset
    else
      nest(dataset, lists, read.collect { case (c, _, Some(numbers)) => c.name -> numbers }.toMap)
  }

  /** Refuses a numeric column with no value weighing more than 0: TFDV 1.16.1 fails on it. */
  private def refuseUnweighable(
      columns: Seq[Column], numbers: Seq[Option[NumberSummary.Written]],
      weighed: StatisticsWeighted.Weighed, weight: String): Unit =
    for (i <- columns.indices.sortBy(columns(_).name != weight)) {
      val name = columns(i).name
      val weighs = weighed.quantiles.get(i).exists(_.nonEmpty)
      // (a feature list's steps' lengths: no feature of TFDV's)
      if (numbers(i).exists(_.anyNumber) && !weighs && !name.startsWith(StatisticsFeatures.Steps)) {
        if (name == weight) throw new IllegalArgumentException(
          s"statistics: weight column '$weight' is 0 or less in every row; TFDV's weighted " +
            "median and histograms are undefined then (TFDV 1.16.1 fails)")
        throw new IllegalArgumentException(
          s"statistics: no value of column '$name' weighs more than 0 (weight column " +
            s"'$weight'); TFDV's weighted median and histograms of it are undefined " +
            "(TFDV 1.16.1 fails)")
      }
    }

  /** `feature` (column `i`) with its weighted figures. */
  private def weigh(
      feature: Feature, i: Int, numbers: Option[NumberSummary.Written],
      weighed: StatisticsWeighted.Weighed, totalWeight: Double): Feature = {
    val common = feature.common.copy(
      weighted = Some(StatisticsWeighted.common(weighed, i, totalWeight)))
    val strings = feature.strings.map(_.copy(
      weighted = Some(StatisticsWeighted.top(weighed, i, label, TopValues, RankBuckets))))
    // TFDV weighs the numbers of a feature that has some besides NaN
    val numeric = feature.numeric.map { n =>
      numbers.filter(_.anyNumber).fold(n) { x =>
        n.copy(weighted = Some(StatisticsWeighted.numeric(weighed, i, x, HistogramBuckets, Fine)))
      }
    }
    feature.copy(common = common, numeric = numeric, strings = strings)
  }

  /** TFDV's custom histograms of a feature list's second level (values per step). */
  private final val Level2 = "level_2_value_list_length_"

  /**
   * Each feature list's two columns (`numbers`: the numeric columns' figures by name, its steps'
   * lengths among them) made one TFDV feature under [[StatisticsFeatures.Sequence]], as TFX
   * computes a SequenceExample's.
   */
  private def nest(dataset: Dataset, lists: Seq[String],
      numbers: Map[String, NumberSummary.Written]): Dataset = {
    import StatisticsFeatures.{Sequence, Steps}
    val byName = dataset.features.map(f => f.path.head -> f).toMap
    val named = lists.toSet
    val kept = dataset.features.filter(f => !named(f.path.head) && !f.path.head.startsWith(Steps))
    val nested = lists.filter(byName.contains).map { n => // (a list null in every row: in none)
      featureList(byName(n), byName(Steps + n), numbers(Steps + n))
    }
    if (nested.isEmpty) dataset.copy(features = kept)
    else {
      val n = dataset.numExamples
      val ones = IndexedSeq.fill(NumValuesBuckets + 1)(1.0)
      val histogram = StatisticsHistograms.quantilesHistogram(ones,
        StatisticsHistograms.cumulative(ones, n.toDouble))
      val struct = Feature(Seq(Sequence), StructType,
        Common(n, 0, 1, 1, 1.0, n, Some(histogram),
          dataset.weightedNumExamples.map(w => WeightedCommon(w, 0.0, 1.0, w))))
      dataset.copy(features = (kept :+ struct) ++ nested)
    }
  }

  /** TFDV's feature of a feature list from its values' and its steps' features. */
  private def featureList(values: Feature, steps: Feature, lengths: NumberSummary.Written)
      : Feature = {
    val s = steps.common
    val present = s.numNonMissing != 0
    val outer = Presence(s.numNonMissing, s.numMissing, if (present) s.minNumValues else 0,
      if (present) s.maxNumValues else 0, s.totNumValues)
    val total = s.totNumValues
    val inner =
      if (total == 0) Presence(0, 0, 0, 0, 0)
      else Presence(total, 0, lengths.min.toLong, lengths.max.toLong, values.common.totNumValues)
    val weightedPresence = (s.weighted, values.common.weighted) match {
      case (Some(o), Some(tot)) =>
        val avg = if (o.totNumValues != 0) tot.totNumValues / o.totNumValues else 0.0
        Seq(o, WeightedCommon(o.totNumValues, 0.0, avg, tot.totNumValues))
      case _ => Nil
    }
    val feature = values.copy(path = Seq(StatisticsFeatures.Sequence, values.path.head),
      common = values.common.copy(presence = Seq(outer, inner),
        weightedPresence = weightedPresence))
    // No step anywhere: TFDV gives a STRING feature with no values nor level-2 histograms.
    if (total == 0)
      return feature.copy(kind = StringType, numeric = None, strings = Some(Strings()))
    // Lengths repeat: TFDV's histograms take the counts up to each quantile, from finer ones.
    val fine = fineQuantiles(lengths)
    val (q, counts) = StatisticsHistograms.rebin(fine,
      StatisticsHistograms.cumulative(fine, total.toDouble), Fine / HistogramBuckets)
    feature.copy(custom = Seq(
      (Level2 + "quantiles", StatisticsHistograms.quantilesHistogram(q, counts)),
      (Level2 + "standard",
        StatisticsHistograms.equiWidthHistogram(q, counts,
          inner.minNumValues.toDouble, inner.maxNumValues.toDouble, HistogramBuckets, 0))))
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
  private def numeric(x: NumberSummary.Written): Numeric = {
    val total = x.values - x.nan // (a list column of empty lists has no number)
    if (total == 0) {
      val onlyNaN =
        if (x.nan == 0) Nil
        else Seq(Histogram(Nil, Standard, x.nan), Histogram(Nil, Quantiles, x.nan))
      return Numeric(histograms = onlyNaN)
    }
    val variance = x.m2 / x.n
    val q = fineQuantiles(x)
    val (finiteMin, finiteMax) = x.finiteRange
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

  /** The quantiles at the fine grid's ranks: the first number whose cumulative weight reaches. */
  private def fineQuantiles(x: NumberSummary.Written): IndexedSeq[Double] = {
    val cumulative = x.weights.scanLeft(0L)(_ + _).tail
    (0 to Fine).map { k =>
      if (k == 0) x.min
      else if (k == Fine) x.max
      else x.points(math.min(reaching(cumulative, k.toDouble / Fine * x.n), x.points.length - 1))
    }
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
