package io.github.sparktfrecord

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}
import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import io.github.sparktfrecord.sql.{NumberSummary, StringCounts}

import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.unsafe.Platform

/**
 * The statistics' aggregates below Spark: [[NumberSummary]]'s exact figures and its quantile
 * summary's rank bound on numbers of many shapes (spread, few distinct, all equal, integers, with
 * NaN, infinities and -0.0, over 600 orders of magnitude, subnormal), and [[StringCounts]]'s
 * counts, merge and top values against a map.
 */
class StatisticsAggregatorSuite extends UnitSuite {

  private case class Figures(counts: Seq[Long], doubles: Seq[Double], points: Seq[(Double, Long)])

  private def summarized(numbers: Array[Double], chunk: Int): Figures =
    figuresOf(written(numbers, chunk))

  private def written(numbers: Array[Double], chunk: Int): Array[Byte] = {
    val summary = new NumberSummary(chunk, new NumberSummary.Work(chunk))
    numbers.foreach(summary.add)
    val bytes = new ByteArrayOutputStream()
    summary.write(new DataOutputStream(bytes))
    bytes.toByteArray
  }

  private def figuresOf(bytes: Array[Byte]): Figures = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
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
    // every chunk starts with NaN, the last one of an odd count (300,001 numbers)
    "NaN first" -> (i => if (i % NumberSummary.Points == 0) Double.NaN else (i % 1000).toDouble),
    "sorted" -> (i => i.toDouble),
    "descending" -> (i => -i.toDouble))

  for ((name, make) <- shapes;
    chunk <- Seq(NumberSummary.Points, 1 << 16, NumberSummary.MostChunk)) {
    test(s"numbers $name, chunks of $chunk: exact figures, ranks within the bound") {
      val numbers = Array.tabulate(300001)(make)
      val levels = 32 - Integer.numberOfLeadingZeros((numbers.length + chunk - 1) / chunk)
      // the class's bound, (2 + levels) / Points, with one to spare
      assertFigures(name, numbers, summarized(numbers, chunk), 3 + levels)
    }
  }

  test("numbers whose sums of every fourth overflow apart: the sum of them all, one by one") {
    // every fourth from the first sums to +infinity, from the second to -infinity (NaN together);
    // all of them in order to 0, as the numbers' largest and smallest alternate
    val m = Double.MaxValue
    val numbers = Array.tabulate(4 * 1000)(i => if (i % 2 == 0) m else -m)
    val figures = summarized(numbers, NumberSummary.Points)
    assertEquals(figures.counts, Seq(4000L, 0L, 0L, 0L, 4000L))
    assertEquals(figures.doubles.head, 0.0) // the mean
  }

  for ((name, make) <- shapes) {
    test(s"numbers $name in 37 partitions, merged in the driver: exact figures, ranks bound") {
      val numbers = Array.tabulate(300001)(make)
      val ends = (0 to 37).map(k => (numbers.length.toLong * k * k / (37 * 37)).toInt) // uneven
      val merged = new NumberSummary(1, new NumberSummary.Work(1))
      for (k <- 0 until 37) {
        val part = written(numbers.slice(ends(k), ends(k + 1)), NumberSummary.Points)
        merged.addWritten(new DataInputStream(new ByteArrayInputStream(part)))
      }
      val bytes = new ByteArrayOutputStream()
      merged.write(new DataOutputStream(bytes))
      val got = figuresOf(bytes.toByteArray)
      assert(got.points.map(_._1) == got.points.map(_._1).sorted, "one run by value")
      // the largest partition's levels, and 6 levels of 37 partitions (2 + L + D, one to spare)
      val levels = 32 - Integer.numberOfLeadingZeros(
        (ends.zip(ends.tail).map { case (a, b) => b - a }.max + 4095) / 4096)
      assertFigures(name, numbers, got, 3 + levels + 6)
    }
  }

  private def assertFigures(name: String, numbers: Array[Double], got: Figures, levels: Int)
      : Unit = {
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
    // within levels / Points of that.
    val bound = levels.toDouble * n / NumberSummary.Points
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

  private def written(counts: StringCounts): Array[Byte] = {
    val bytes = new ByteArrayOutputStream()
    counts.write(new DataOutputStream(bytes))
    bytes.toByteArray
  }

  private def merged(into: StringCounts, parts: Array[Byte]*): StringCounts = {
    parts.foreach(p => into.addWritten(new DataInputStream(new ByteArrayInputStream(p))))
    into
  }

  // Every value with its count, from writeFigures with all of them on top.
  private def allCounts(counts: StringCounts): Map[Seq[Byte], Long] = {
    val figures = new ByteArrayOutputStream()
    counts.writeFigures(new DataOutputStream(figures), counts.distinct)
    val in = new DataInputStream(new ByteArrayInputStream(figures.toByteArray))
    Seq.fill(3)(in.readLong())
    Seq.fill(in.readInt()) {
      val b = new Array[Byte](in.readInt())
      in.readFully(b)
      (b.toSeq, in.readLong())
    }.toMap
  }

  test("strings: values longer than the waiting room, among short ones, each counted") {
    // Lengths about the 4,096 bytes of values a table keeps aside before looking them up: a
    // value that fills the room, one that overflows it, one longer than it (looked up at once).
    val lengths = Seq(0, 1, 7, 4095, 4096, 4097, 9000, 3, 2048, 2049)
    val values = (0 until 3000).map { i =>
      val n = lengths(i % lengths.length)
      Array.tabulate[Byte](n)(k => ((k * 31 + i % 97) & 0xff).toByte)
    }
    val expected = values.groupBy(_.toSeq).map { case (k, v) => k -> v.length.toLong }
    val (left, right) = values.splitAt(1234)
    assertEquals(allCounts(counted(values)), expected)
    for (m <- Seq(merged(counted(left), written(counted(right))),
        merged(new StringCounts, written(counted(left)), written(counted(right))))) {
      assertEquals(m.distinct, expected.size)
      assertEquals(allCounts(m), expected)
    }
  }

  test("strings: values whose hashes share the bits a slot keeps, apart through growth and merge") {
    // Pairs of 8-byte values with the same high 32 bits of their hash (found among 2^19 values,
    // 32 such pairs expected), so each pair starts in one slot and is told apart by its bytes.
    val value = (i: Int) => ByteBuffer.allocate(8).putLong(i.toLong).array()
    val high = (b: Array[Byte]) =>
      XXH64.hashUnsafeBytes(b, Platform.BYTE_ARRAY_OFFSET, b.length, 42L) >>> 32
    val byHigh = Array.tabulate(1 << 19)(i => high(value(i)) << 32 | i).sorted
    val pairs = byHigh.indices.drop(1)
      .filter(k => byHigh(k) >>> 32 == byHigh(k - 1) >>> 32)
      .map(k => (value(byHigh(k - 1).toInt), value(byHigh(k).toInt)))
      .take(8)
    assertEquals(pairs.length, 8)
    val fillers = (0 until 30000).map(i => ByteBuffer.allocate(4).putInt(i).array())
    def counts(values: Seq[(Array[Byte], Long)]): StringCounts = {
      val c = new StringCounts
      values.foreach { case (b, n) => c.add(b, Platform.BYTE_ARRAY_OFFSET, b.length, n) }
      c
    }
    val paired = pairs.flatMap { case (a, b) => Seq(a, b) }.zipWithIndex
      .map { case (b, k) => (b, 1000L + k) }
    // The pairs counted, then thousands more (the table grown and rehashed), then the pairs again.
    val left = paired.take(12) ++ fillers.take(20000).map((_, 1L)) ++ paired.take(12)
    val right = paired.drop(8) ++ fillers.drop(10000).map((_, 1L)) ++ paired.drop(8)
    val expected = (left ++ right).groupBy(_._1.toSeq).map { case (k, v) => k -> v.map(_._2).sum }

    assertEquals(allCounts(counts(left)),
      left.groupBy(_._1.toSeq).map { case (k, v) =>
        k -> v.map(_._2).sum
      })
    val (l, r) = (written(counts(left)), written(counts(right)))
    for (m <- Seq(merged(counts(left), r), merged(new StringCounts, l, r))) {
      assertEquals(m.distinct, expected.size)
      assertEquals(allCounts(m), expected)
    }
  }
}
