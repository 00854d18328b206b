package io.github.sparktfrecord

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import io.github.sparktfrecord.sql.{NumberSummary, StringCounts}

import org.apache.spark.unsafe.Platform

/**
 * The statistics' aggregates below Spark: [[NumberSummary]]'s exact figures and its quantile
 * summary's rank bound on numbers of many shapes (spread, few distinct, all equal, integers, with
 * NaN, infinities and -0.0, over 600 orders of magnitude, subnormal), and [[StringCounts]]'s
 * counts, merge and top values against a map.
 */
class StatisticsAggregatorSuite extends UnitSuite {

  private case class Figures(counts: Seq[Long], doubles: Seq[Double], points: Seq[(Double, Long)])

  private def summarized(numbers: Array[Double], chunk: Int): Figures = {
    val summary = new NumberSummary(chunk, new NumberSummary.Work(chunk))
    numbers.foreach(summary.add)
    val bytes = new ByteArrayOutputStream()
    summary.write(new DataOutputStream(bytes))
    val in = new DataInputStream(new ByteArrayInputStream(bytes.toByteArray))
    val counts = Seq.fill(5)(in.readLong())
    val doubles = Seq.fill(6)(in.readDouble())
    val k = in.readInt()
    val values = Seq.fill(k)(in.readDouble())
    Figures(counts, doubles, values.zip(Seq.fill(k)(in.readLong())))
  }

  private val random = new Random(59)
  private val shapes: Seq[(String, Int => Double)] = Seq(
    "spread" -> (_ => random.nextGaussian() * 1e3),
    "floats" -> (_ => random.nextFloat().toDouble * 2 - 1),
    "few distinct" -> (_ => random.nextInt(7).toDouble),
    "all equal" -> (_ => 3.5),
    "integers" -> (_ => random.nextInt(1000000).toDouble),
    "awkward" ->
      (i =>
        Array(Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, -0.0,
          0.0, Long.MaxValue.toDouble, 1e-300)(i % 7) + (if (i % 11 == 0) i else 0)),
    "magnitudes" ->
      (_ => math.pow(10, random.nextDouble() * 600 - 300) * (random.nextInt(2) * 2 - 1)),
    "subnormal" -> (_ => java.lang.Double.MIN_VALUE * random.nextInt(100)),
    "sorted" -> (i => i.toDouble),
    "descending" -> (i => -i.toDouble))

  for ((name, make) <- shapes; chunk <- Seq(NumberSummary.Points, 1 << 16)) {
    test(s"numbers $name, chunks of $chunk: exact figures, ranks within the bound") {
      val numbers = Array.tabulate(300000)(make)
      val got = summarized(numbers, chunk)
      val kept = numbers.filterNot(_.isNaN).sorted
      val n = kept.length
      assertEquals(got.counts,
        Seq(numbers.length.toLong, (numbers.length - n).toLong,
          kept.count(_ == Double.PositiveInfinity).toLong, kept.count(_ == 0.0).toLong, n.toLong))
      assertEquals(got.doubles(2), kept.head)
      assertEquals(got.doubles(3), kept.last)
      val finite = kept.filter(x => !x.isInfinite)
      assertEquals(got.doubles(4), finite.head)
      assertEquals(got.doubles(5), finite.last)
      val mean = kept.sum / n
      if (mean.isInfinite || mean.isNaN) assert(got.doubles(0).isNaN || got.doubles(0).isInfinite)
      else {
        assertEqualsDouble(got.doubles(0), mean, 1e-9 * math.max(1, math.abs(mean)))
        val m2 = kept.map(x => (x - mean) * (x - mean)).sum
        assertEqualsDouble(got.doubles(1), m2, 1e-9 * math.max(1, m2))
      }
      // Each point stands at its cumulative weight; the numbers' ranks of its value must reach
      // within (3 + levels) / Points of that (the class's bound, with one to spare).
      val levels = 32 - Integer.numberOfLeadingZeros((n + chunk - 1) / chunk)
      val bound = (3 + levels).toDouble * n / NumberSummary.Points
      val sortedPoints = got.points.sortBy(_._1)
      assertEquals(sortedPoints.map(_._2).sum, n.toLong)
      var cumulative = 0L
      for ((v, w) <- sortedPoints) {
        cumulative += w
        val below = lowerBound(kept, v)
        val upTo = upperBound(kept, v)
        val off = if (cumulative < below) below - cumulative
        else if (cumulative > upTo) cumulative - upTo else 0L
        assert(off <= bound, s"$name: the point $v at rank $cumulative is $off off (> $bound)")
      }
    }
  }

  private def lowerBound(a: Array[Double], v: Double): Long = {
    var (lo, hi) = (0, a.length)
    while (lo < hi) { val m = (lo + hi) >>> 1; if (a(m) < v) lo = m + 1 else hi = m }
    lo.toLong
  }

  private def upperBound(a: Array[Double], v: Double): Long = {
    var (lo, hi) = (0, a.length)
    while (lo < hi) { val m = (lo + hi) >>> 1; if (a(m) <= v) lo = m + 1 else hi = m }
    lo.toLong
  }

  private def counted(values: Seq[Array[Byte]]): StringCounts = {
    val counts = new StringCounts
    values.foreach(b => counts.add(b, Platform.BYTE_ARRAY_OFFSET, b.length, 1))
    counts
  }

  test("strings: each distinct value counted, merged across partitions, the top in order") {
    val words = Seq.fill(50000)(random.alphanumeric.take(random.nextInt(12)).mkString)
    val values = words.map(_.getBytes(UTF_8)) ++
      Seq(Array[Byte](-1, -2), Array[Byte](-1, -2), Array.emptyByteArray)
    val (left, right) = values.splitAt(values.length / 3)
    val merged = counted(left)
    val written = new ByteArrayOutputStream()
    counted(right).write(new DataOutputStream(written))
    merged.addWritten(new DataInputStream(new ByteArrayInputStream(written.toByteArray)))

    val expected = values.groupBy(_.toSeq).map { case (k, v) => k -> v.length.toLong }
    assertEquals(merged.distinct, expected.size)
    val figures = new ByteArrayOutputStream()
    merged.writeFigures(new DataOutputStream(figures), 1000)
    val in = new DataInputStream(new ByteArrayInputStream(figures.toByteArray))
    assertEquals(in.readLong(), expected.size.toLong)
    assertEquals(in.readLong(), values.map(_.length.toLong).sum)
    assertEquals(in.readLong(), 2L) // the two copies of bytes FF FE, not UTF-8
    val top = Seq.fill(in.readInt()) {
      val b = new Array[Byte](in.readInt())
      in.readFully(b)
      (b.toSeq, in.readLong())
    }
    def larger(a: Seq[Byte], b: Seq[Byte]): Boolean = {
      val at = a.zip(b).indexWhere { case (x, y) => x != y }
      if (at < 0) a.length > b.length else (a(at) & 0xff) > (b(at) & 0xff)
    }
    val want = expected.toSeq
      .sortWith { case ((a, ca), (b, cb)) => if (ca != cb) ca > cb else larger(a, b) }
      .take(1000)
    assertEquals(top, want)
  }
}
