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

  /**
   * Buckets between consecutive boundaries with their counts; runs of one bound evened out. On
   * arrays of doubles: on the sequences, boxed, the JIT compiled this again on every call in
   * turn (its loops' predicates failed), two CPU seconds in four calls.
   */
  private def binWeights(bounds: IndexedSeq[Double], cumulative: IndexedSeq[Double])
      : IndexedSeq[Bucket] = {
    val b = bounds.toArray
    val c = cumulative.toArray
    val n = b.length - 1 // buckets: bucket k from b(k) to b(k + 1)
    val counts = new Array[Double](math.max(0, n))
    var k = 0
    while (k < n) {
      counts(k) = c(k + 1) - c(k)
      k += 1
    }
    var i = 0
    while (i < n) {
      var j = i + 1
      while (j < n && b(i + 1) == b(j + 1)) j += 1
      if (j > i + 1) {
        var sum = 0.0
        k = i
        while (k < j) {
          sum += counts(k)
          k += 1
        }
        val spread = sum / (j - i)
        k = i
        while (k < j) {
          counts(k) = spread
          k += 1
        }
      }
      i = j
    }
    i = 0
    while (i < n && b(0) == b(i) && b(1) == b(i + 1)) i += 1
    k = 0
    while (k < i) {
      counts(k) += c(0) / i
      k += 1
    }
    (0 until n).map(k => Bucket(b(k), b(k + 1), counts(k)))
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
