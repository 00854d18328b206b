package io.github.sparktfrecord.sql

import java.io.DataOutputStream

/**
 * One column's numbers in one partition, for TFDV's numeric statistics: exact counts, extremes and
 * moments, and a quantile summary.
 *
 * Numbers gather in a chunk ([[NumberSummary.chunkSize]]). A full chunk is folded in: its moments
 * combined with the rest (Chan et al.'s pairwise update), its numbers counted into buckets by
 * value (linear between the extremes), a bucket of at most chunk / Points numbers standing for
 * them by one of them (for spread numbers, one pass), the numbers of larger ones gathered and
 * split again (or sorted), and [[NumberSummary.Points]] of them taken at evenly spaced ranks.
 * Summaries then merge pairwise up levels, as a binary counter carries, each merge keeping Points.
 * A summary's ranks are within (2 + levels) / Points of the numbers' ranks: the buckets and the
 * picking cost 1 / Points each in a chunk, every level another (levels: log2 of the partition's
 * chunks; 1/410 at 2^8 chunks, where TFDV's epsilon is 1/100).
 */
private[sparktfrecord] final class NumberSummary(chunkSize: Int, work: NumberSummary.Work) {
  import NumberSummary._

  private val chunk = new Array[Double](chunkSize) // the numbers but NaN, to fold in
  private val scratch = work.scratch
  private val counts = work.counts
  private var filled = 0
  private var nan = 0L
  private var values = 0L
  private var n = 0L
  private var posInf = 0L
  private var zeros = 0L
  private var mean = 0.0
  private var m2 = 0.0
  private var low = Double.PositiveInfinity
  private var high = Double.NegativeInfinity
  private var finiteLow = Double.PositiveInfinity
  private var finiteHigh = Double.NegativeInfinity
  private val levels = new java.util.ArrayList[Summary]()

  /** Adds a number (NaN counted apart, as TFDV leaves it out of every figure but its count). */
  def add(x: Double): Unit = {
    values += 1
    if (x != x) nan += 1
    else {
      chunk(filled) = x
      filled += 1
      if (filled == chunkSize) fold()
    }
  }

  private def fold(): Unit = {
    val m = filled
    filled = 0
    if (m == 0) return
    var sum = 0.0
    var lo = Double.PositiveInfinity
    var hi = Double.NegativeInfinity
    var i = 0
    while (i < m) {
      val x = chunk(i)
      sum += x
      if (x < lo) lo = x
      if (x > hi) hi = x
      if (x == 0.0) zeros += 1
      i += 1
    }
    low = math.min(low, lo)
    high = math.max(high, hi)
    var fLo = lo
    var fHi = hi
    if (lo == Double.NegativeInfinity || hi == Double.PositiveInfinity) { // rare: apart
      fLo = Double.PositiveInfinity
      fHi = Double.NegativeInfinity
      i = 0
      while (i < m) {
        val x = chunk(i)
        if (x == Double.PositiveInfinity) posInf += 1
        else if (x != Double.NegativeInfinity) {
          if (x < fLo) fLo = x
          if (x > fHi) fHi = x
        }
        i += 1
      }
    }
    finiteLow = math.min(finiteLow, fLo)
    finiteHigh = math.max(finiteHigh, fHi)
    val chunkMean = sum / m
    var chunkM2 = 0.0
    i = 0
    while (i < m) {
      val d = chunk(i) - chunkMean
      chunkM2 += d * d
      i += 1
    }
    if (n == 0) {
      mean = chunkMean
      m2 = chunkM2
    } else {
      val total = n + m
      val delta = chunkMean - mean
      // an infinity in either part: the mean is that infinity (or NaN), as a plain sum gives it
      mean = if (java.lang.Double.isFinite(delta)) mean + delta * m / total else mean + delta
      m2 = m2 + chunkM2 + delta * delta * n * m / total
    }
    n += m
    carry(summarized(m, fLo, fHi), 0)
  }

  /**
   * The chunk's m numbers summarized: counted into buckets by value (linear between the finite
   * `lo` and `hi`; -inf in the first, +inf in the last), each bucket keeping the last number put
   * in it, which stands for all of a bucket of at most chunk / Points (their ranks are within its
   * count). The numbers of larger buckets are gathered to the chunk's front and ordered as far
   * ([[group]]). Then Points numbers at ranks ceil(k m / Points), weighted by the ranks between.
   */
  private def summarized(m: Int, lo: Double, hi: Double): Summary = {
    val most = math.max(1, m / Points)
    val buckets = math.max(16, math.min(Buckets, m / 4))
    val (count, last, heavyAt, index) = (counts(0), work.last, work.heavyAt, work.index)
    java.util.Arrays.fill(count, 0, buckets, 0)
    val half = hi * 0.5 - lo * 0.5 // halves: hi - lo may overflow
    val scale = if (half > 0) (buckets - 3) / half else 0.0
    val base = lo * 0.5
    // Three passes, each one thing: on this JVM, one loop that counts and keeps is 3x as slow.
    var i = 0
    while (i < m) {
      index(i) = bucket(chunk(i), base, scale, buckets)
      i += 1
    }
    i = 0
    while (i < m) {
      count(index(i)) += 1
      i += 1
    }
    i = 0
    while (i < m) {
      last(index(i)) = chunk(i)
      i += 1
    }
    var heavy = 0
    var b = 0
    while (b < buckets) {
      heavyAt(b) = if (count(b) > most) heavy else -1
      if (count(b) > most) heavy += count(b)
      b += 1
    }
    if (heavy > 0) {
      i = 0
      while (i < m) {
        val b = index(i)
        if (heavyAt(b) >= 0) {
          scratch(heavyAt(b)) = chunk(i)
          heavyAt(b) += 1
        }
        i += 1
      }
      System.arraycopy(scratch, 0, chunk, 0, heavy)
      b = 0
      while (b < buckets) {
        if (heavyAt(b) >= 0) {
          heavyAt(b) -= count(b) // back to its start
          refine(heavyAt(b), heavyAt(b) + count(b), 1, most)
        }
        b += 1
      }
    }
    val size = math.min(m, Points)
    val picked = new Summary(new Array[Double](size), new Array[Long](size))
    var (before, below) = (0L, 0L) // the rank before; the numbers in buckets before b
    b = 0
    var k = 1
    while (k <= size) {
      val rank = (k.toLong * m + size - 1) / size
      while (below + count(b) < rank) {
        below += count(b)
        b += 1
      }
      picked.values(k - 1) =
        if (heavyAt(b) < 0) last(b) else chunk(heavyAt(b) + (rank - below - 1).toInt)
      picked.weights(k - 1) = rank - before
      before = rank
      k += 1
    }
    picked.sortNearlySorted()
    picked
  }

  /**
   * Orders numbers [from, until) into buckets by value, linearly between the finite `lo` and
   * `hi` (-inf in the first, +inf in the last), then each bucket of more than `most` the same
   * way. A range that does not split, or is split too deep, is sorted whole.
   */
  private def group(from: Int, until: Int, depth: Int, most: Int, lo: Double, hi: Double): Unit = {
    if (depth == counts.length) {
      java.util.Arrays.sort(chunk, from, until)
      return
    }
    val buckets = math.max(16, math.min(counts(depth).length, (until - from) / 4))
    val count = counts(depth)
    java.util.Arrays.fill(count, 0, buckets, 0)
    val half = hi * 0.5 - lo * 0.5 // halves: hi - lo may overflow
    val scale = if (half > 0) (buckets - 3) / half else 0.0
    val base = lo * 0.5
    var i = from
    while (i < until) {
      count(bucket(chunk(i), base, scale, buckets)) += 1
      i += 1
    }
    if (count(bucket(chunk(from), base, scale, buckets)) == until - from) {
      java.util.Arrays.sort(chunk, from, until) // no split: subnormal spans, or equal numbers
      return
    }
    var start = from
    var d = 0
    while (d < buckets) { // counts become each bucket's start
      val c = count(d)
      count(d) = start
      start += c
      d += 1
    }
    i = from
    while (i < until) {
      val x = chunk(i)
      val b = bucket(x, base, scale, buckets)
      scratch(count(b)) = x
      count(b) += 1
      i += 1
    }
    System.arraycopy(scratch, from, chunk, from, until - from)
    var bucketStart = from
    d = 0
    while (d < buckets) {
      val bucketEnd = count(d) // now each bucket's end
      if (bucketEnd - bucketStart > most) refine(bucketStart, bucketEnd, depth + 1, most)
      bucketStart = bucketEnd
      d += 1
    }
  }

  /** [[group]] of a bucket, between its own finite extremes; nothing to do if all are equal. */
  private def refine(from: Int, until: Int, depth: Int, most: Int): Unit = {
    var lo = Double.PositiveInfinity
    var hi = Double.NegativeInfinity
    var all = Double.PositiveInfinity
    var allHigh = Double.NegativeInfinity
    var i = from
    while (i < until) {
      val x = chunk(i)
      if (x < all) all = x
      if (x > allHigh) allHigh = x
      if (x > Double.NegativeInfinity && x < Double.PositiveInfinity) {
        if (x < lo) lo = x
        if (x > hi) hi = x
      }
      i += 1
    }
    if (all < allHigh) group(from, until, depth, most, math.min(lo, hi), math.max(lo, hi))
  }

  private def carry(summary: Summary, level: Int): Unit = {
    if (level == levels.size) levels.add(null)
    val held = levels.get(level)
    if (held == null) levels.set(level, summary)
    else {
      levels.set(level, null)
      carry(held.mergedWith(summary), level + 1)
    }
  }

  /**
   * Writes the partition's figures: values, NaN, +inf, zeros and numbers (n) as longs; mean, m2,
   * min, max, finite min and finite max as doubles (the extremes NaN where there are none); then
   * the summary's size, its numbers and their weights.
   */
  def write(out: DataOutputStream): Unit = {
    fold()
    for (c <- Array(values, nan, posInf, zeros, n)) out.writeLong(c)
    val none = Double.NaN
    val extremes = if (n == 0) Array(none, none) else Array(low, high)
    val finite = if (finiteLow > finiteHigh) Array(none, none) else Array(finiteLow, finiteHigh)
    for (x <- Array(mean, m2) ++ extremes ++ finite) out.writeDouble(x)
    val held = (0 until levels.size).map(levels.get).filter(_ != null)
    out.writeInt(held.map(_.values.length).sum)
    for (s <- held; x <- s.values) out.writeDouble(x)
    for (s <- held; w <- s.weights) out.writeLong(w)
  }
}

private[sparktfrecord] object NumberSummary {

  /** The points a summary keeps. */
  val Points: Int = 4096

  /** The numbers a task's chunks hold in all, at most (8 bytes each), and a chunk at most. */
  private val TaskNumbers = 1 << 22
  private val MostChunk = 1 << 16

  /** The chunk of each of `columns` numeric columns: at least Points, at most MostChunk. */
  def chunkSize(columns: Int): Int =
    Integer.highestOneBit(math.max(Points, math.min(MostChunk, TaskNumbers / math.max(1, columns))))

  /** What a task's summaries share while one of them folds a chunk (at most `chunk` numbers). */
  final class Work(chunk: Int) {
    val scratch: Array[Double] = new Array[Double](chunk)
    val counts: Array[Array[Int]] = Array.fill(MaxDepth)(new Array[Int](Buckets))
    val last: Array[Double] = new Array[Double](Buckets) // each bucket's last number
    val heavyAt: Array[Int] = new Array[Int](Buckets) // where a large bucket's numbers go, or -1
    val index: Array[Int] = new Array[Int](chunk) // each number's bucket
  }

  /**
   * The buckets a range is split into at most (a quarter of its numbers: few buckets hold more than
   * chunk / Points), and how deep before a range is sorted instead.
   */
  private val Buckets = 16384
  private val MaxDepth = 6

  /** The bucket of `x` (-inf: the first; +inf: the last; finite: between, by value). */
  @inline private def bucket(x: Double, base: Double, scale: Double, buckets: Int): Int =
    if (x == Double.PositiveInfinity) buckets - 1
    else if (x == Double.NegativeInfinity) 0
    else {
      val at = 1 + (x * 0.5 - base) * scale // from 1, as x is at least the finite low
      if (at >= buckets - 2) buckets - 2 else at.toInt
    }

  /** Numbers in order with their weights: each stands for `weight` numbers ranked up to it. */
  final class Summary(val values: Array[Double], val weights: Array[Long]) {

    /** Sorts by value by insertion: the picks are out of order only within a small group. */
    def sortNearlySorted(): Unit = {
      var i = 1
      while (i < values.length) {
        val x = values(i)
        val w = weights(i)
        var j = i - 1
        while (j >= 0 && values(j) > x) {
          values(j + 1) = values(j)
          weights(j + 1) = weights(j)
          j -= 1
        }
        values(j + 1) = x
        weights(j + 1) = w
        i += 1
      }
    }

    /** Both summaries in one of at most Points, picked at evenly spaced cumulative weights. */
    def mergedWith(other: Summary): Summary = {
      val size = values.length + other.values.length
      val all = new Summary(new Array[Double](size), new Array[Long](size))
      var i = 0
      var j = 0
      var k = 0
      while (k < size) {
        val mine = j == other.values.length ||
          (i < values.length && values(i) <= other.values(j))
        if (mine) {
          all.values(k) = values(i)
          all.weights(k) = weights(i)
          i += 1
        } else {
          all.values(k) = other.values(j)
          all.weights(k) = other.weights(j)
          j += 1
        }
        k += 1
      }
      if (size <= Points) all else all.compressed()
    }

    private def compressed(): Summary = {
      var total = 0L // (not weights.sum, which boxes every weight)
      var w = 0
      while (w < weights.length) {
        total += weights(w)
        w += 1
      }
      val out = new Summary(new Array[Double](Points), new Array[Long](Points))
      var before = 0L
      var cumulative = weights(0)
      var at = 0
      var k = 1
      while (k <= Points) {
        val rank = (k.toLong * total + Points - 1) / Points
        while (cumulative < rank) {
          at += 1
          cumulative += weights(at)
        }
        out.values(k - 1) = values(at)
        out.weights(k - 1) = rank - before
        before = rank
        k += 1
      }
      out
    }
  }
}
