package io.github.sparktfrecord.sql

import io.github.sparktfrecord.sql.StatisticsProto.{Bucket, Histogram, Quantiles, Standard}

/**
 * TFDV's histograms from quantiles, as TFDV's `utils/quantiles_util.py` (1.16) builds them, and
 * step for step as the Python side's `statistics_histograms` does, so that both give the same
 * doubles.
 */
private[sparktfrecord] object StatisticsHistograms {

  /** The middle boundary (the mean of the two middle ones of an even number). */
  def median(quantiles: IndexedSeq[Double]): Double = {
    val n = quantiles.length
    if (n % 2 == 0) (quantiles(n / 2 - 1) + quantiles(n / 2)) / 2.0 else quantiles(n / 2)
  }

  /** Buckets between consecutive boundaries with their counts; runs of one bound evened out. */
  private def binWeights(bounds: IndexedSeq[Double], cumulative: IndexedSeq[Double])
      : IndexedSeq[Bucket] = {
    val low = bounds.init
    val high = bounds.tail
    val counts = Array.tabulate(low.length)(k => cumulative(k + 1) - cumulative(k))
    var i = 0
    while (i < low.length) {
      var j = i + 1
      while (j < low.length && high(i) == high(j)) j += 1
      if (j > i + 1) {
        var sum = 0.0
        for (k <- i until j) sum += counts(k)
        val spread = sum / (j - i)
        for (k <- i until j) counts(k) = spread
      }
      i = j
    }
    i = 0
    while (i < low.length && low(0) == low(i) && high(0) == high(i)) i += 1
    if (i > 0) for (k <- 0 until i) counts(k) += cumulative(0) / i
    low.indices.map(k => Bucket(low(k), high(k), counts(k)))
  }

  /** The QUANTILES histogram of these boundaries and cumulative counts. */
  def quantilesHistogram(quantiles: IndexedSeq[Double], cumulative: IndexedSeq[Double])
      : Histogram = Histogram(binWeights(quantiles, cumulative), Quantiles)

  /** Every `factor`-th boundary (and the first), with its cumulative count. */
  def rebin(quantiles: IndexedSeq[Double], cumulative: IndexedSeq[Double], factor: Int)
      : (IndexedSeq[Double], IndexedSeq[Double]) = {
    def every(xs: IndexedSeq[Double]) = xs.head +: (factor until xs.length by factor).map(xs)
    (every(quantiles), every(cumulative))
  }

  private def stripInfinities(
      quantiles: IndexedSeq[Double], cumulative: IndexedSeq[Double], finiteMax: Double,
      posInf: Double): (IndexedSeq[Double], IndexedSeq[Double], Double) = {
    var (q, c) = (quantiles, cumulative)
    val neg = q.count(_ == Double.NegativeInfinity)
    var numNegInf = 0.0
    if (neg > 0) {
      numNegInf = c(neg - 1)
      q = q.drop(neg)
      c = c.drop(neg).map(_ - numNegInf)
    }
    if (posInf != 0) {
      val found = q.indexWhere(_ >= Double.PositiveInfinity)
      val at = if (found < 0) q.length else found
      val finiteMaxCount = c.last - posInf
      q = q.take(at) :+ finiteMax
      c = c.take(at) :+ finiteMaxCount
    }
    (q, c, numNegInf)
  }

  // The fraction of `b` in [low, high], whether it lies before, whether after.
  private def overlap(b: Bucket, low: Double, high: Double, first: Boolean)
      : (Double, Boolean, Boolean) =
    if (b.high == b.low && b.low == low) if (first) (1.0, false, false) else (0.0, true, false)
    else if (b.high < low) (0.0, true, false)
    else if (b.low > high) (0.0, false, true)
    else if (low <= b.low && high >= b.high) (1.0, false, false)
    else if (low <= b.low) ((high - b.low) / (b.high - b.low), false, false)
    else if (high >= b.high) ((b.high - low) / (b.high - b.low), false, false)
    else ((high - low) / (b.high - b.low), false, false)

  /** The STANDARD histogram: `buckets` equal buckets over the finite range, ±inf apart. */
  def equiWidthHistogram(
      quantiles: IndexedSeq[Double], cumulative: IndexedSeq[Double], finiteMin: Double,
      finiteMax: Double, buckets: Int, posInf: Double): Histogram = {
    if (!java.lang.Double.isFinite(finiteMin) && !java.lang.Double.isFinite(finiteMax)) {
      return Histogram(Seq(Bucket(finiteMin, finiteMax, cumulative.last)), Standard)
    }
    val (q, c, numNegInf) = stripInfinities(quantiles, cumulative, finiteMax, posInf)
    val fine = binWeights(q, c)
    val bounds =
      if (finiteMin == finiteMax) IndexedSeq(finiteMin, finiteMax)
      else {
        val step = (finiteMax - finiteMin) / buckets
        (0 until buckets).map(k => finiteMin + k * step) :+ finiteMax
      }
    if (bounds.exists(b => b.isNaN || b.isInfinite)) return Histogram(Nil, Standard)
    val out = Seq.newBuilder[Bucket]
    if (numNegInf != 0) out += Bucket(Double.NegativeInfinity, Double.NegativeInfinity, numNegInf)
    var start = 0
    for (i <- 0 until bounds.length - 1) {
      val (low, high) = (bounds(i), bounds(i + 1))
      var count = 0.0
      var k = start
      var after = false
      while (k < fine.length && !after) {
        val (part, isBefore, isAfter) = overlap(fine(k), low, high, i == 0)
        after = isAfter
        if (!after) {
          if (isBefore) start = k
          count += part * fine(k).count
        }
        k += 1
      }
      out += Bucket(low, high, count)
    }
    if (posInf != 0) out += Bucket(Double.PositiveInfinity, Double.PositiveInfinity, posInf)
    Histogram(out.result(), Standard)
  }

  /** The counts at or below each boundary; equal boundaries get the last one's rank, as TFDV's. */
  def cumulative(quantiles: IndexedSeq[Double], total: Double): IndexedSeq[Double] = {
    val steps = quantiles.length - 1
    val out = new Array[Double](quantiles.length)
    var k = steps
    for (i <- steps to 0 by -1) {
      if (i < steps && quantiles(i) != quantiles(i + 1)) k = i
      out(i) = total * k / steps
    }
    out.toIndexedSeq
  }

  /**
   * The median and the standard and quantiles histograms (`buckets` each) of numbers from their
   * fine quantiles `q` (`buckets * 100 + 1`), their `total` count (or weight), their finite min
   * and max, the count (or weight) of +inf and the count of NaN.
   */
  def numericHistograms(
      q: IndexedSeq[Double], total: Double, finiteMin: Double, finiteMax: Double, posInf: Double,
      nan: Long, buckets: Int): (Double, Seq[Histogram]) = {
    val counts = cumulative(q, total)
    val standard = equiWidthHistogram(q, counts, finiteMin, finiteMax, buckets, posInf)
    val (coarse, coarseCounts) = rebin(q, counts, (q.length - 1) / buckets)
    val quantiles = quantilesHistogram(coarse, coarseCounts)
    (median(q), Seq(standard.copy(numNaN = nan), quantiles.copy(numNaN = nan)))
  }
}
