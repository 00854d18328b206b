package io.github.sparktfrecord.sql

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparktfrecord.wire.ProtoWire

/**
 * TFDV's `DatasetFeatureStatisticsList` (tensorflow_metadata's `statistics.proto`): the messages
 * the statistics fill, and their binary encoding, field for field as the Python side's
 * `statistics_proto.encode` writes them (proto3: a number that is 0 is not written; -0.0 is).
 */
private[sparktfrecord] object StatisticsProto {

  /** `FeatureNameStatistics.Type`. */
  final val IntType = 0
  final val FloatType = 1
  final val StringType = 2
  final val StructType = 4

  /** `Histogram.HistogramType`. */
  final val Standard = 0
  final val Quantiles = 1

  final case class Bucket(low: Double, high: Double, count: Double)

  final case class Histogram(buckets: Seq[Bucket], kind: Int = Standard, numNaN: Long = 0)

  /** `WeightedCommonStatistics`: each example counted by its weight. */
  final case class WeightedCommon(
      numNonMissing: Double, numMissing: Double, avgNumValues: Double, totNumValues: Double)

  /** `PresenceAndValencyStatistics`: one level of a nested feature (examples, then steps). */
  final case class Presence(
      numNonMissing: Long, numMissing: Long, minNumValues: Long, maxNumValues: Long,
      totNumValues: Long)

  /** `CommonStatistics`; for a nested feature, its `presence` (and weighted) per level. */
  final case class Common(
      numNonMissing: Long,
      numMissing: Long,
      minNumValues: Long = 0,
      maxNumValues: Long = 0,
      avgNumValues: Double = 0,
      totNumValues: Long = 0,
      numValuesHistogram: Option[Histogram] = None,
      weighted: Option[WeightedCommon] = None,
      presence: Seq[Presence] = Nil,
      weightedPresence: Seq[WeightedCommon] = Nil)

  final case class WeightedNumeric(
      mean: Double, stdDev: Double, median: Double, histograms: Seq[Histogram])

  final case class Numeric(
      mean: Double = 0,
      stdDev: Double = 0,
      numZeros: Long = 0,
      min: Double = 0,
      median: Double = 0,
      max: Double = 0,
      histograms: Seq[Histogram] = Nil,
      weighted: Option[WeightedNumeric] = None)

  /** (value, count) pairs, most frequent first. */
  type Counted = Seq[(String, Double)]

  /** `StringStatistics`; `weighted`: its top values and rank histogram, weighted. */
  final case class Strings(
      unique: Long = 0,
      topValues: Counted = Nil,
      avgLength: Double = 0,
      rank: Counted = Nil,
      invalidUtf8: Long = 0,
      weighted: Option[(Counted, Counted)] = None)

  /** `FeatureNameStatistics`: `numeric` for INT and FLOAT, `strings` for STRING, or neither. */
  final case class Feature(
      path: Seq[String],
      kind: Int,
      common: Common,
      numeric: Option[Numeric] = None,
      strings: Option[Strings] = None,
      custom: Seq[(String, Histogram)] = Nil)

  /** `DatasetFeatureStatistics`. */
  final case class Dataset(
      numExamples: Long,
      features: Seq[Feature],
      name: String = "",
      weightedNumExamples: Option[Double] = None)

  /** The binary `DatasetFeatureStatisticsList` of `datasets`. */
  def encode(datasets: Seq[Dataset]): Array[Byte] = {
    val out = new Message
    for (d <- datasets) out.message(1, always = true) { body =>
      body.text(1, d.name).uint(2, d.numExamples)
      d.features.foreach(f => body.message(3, always = true)(feature(_, f)))
      d.weightedNumExamples.foreach(body.double(4, _))
    }
    out.bytes
  }

  /** A message's body being written: its fields in the order of the calls. */
  private final class Message {
    private val out = new ByteArrayOutputStream()

    def bytes: Array[Byte] = out.toByteArray

    private val scratch = new Array[Byte](10) // a varint or a fixed number, written through

    private def varint(value: Long): Unit =
      out.write(scratch, 0, ProtoWire.writeVarint(scratch, 0, value))

    private def key(number: Int, wireType: Int): Unit =
      varint(ProtoWire.tag(number, wireType).toLong)

    private def fixed32(bits: Int): Unit =
      out.write(scratch, 0, ProtoWire.writeFixed32(scratch, 0, bits))

    private def fixed64(bits: Long): Unit = {
      ProtoWire.writeFixed32(scratch, 0, bits.toInt)
      out.write(scratch, 0, ProtoWire.writeFixed32(scratch, 4, (bits >>> 32).toInt))
    }

    /** A varint field, not written if 0 (a negative number as its 64 bits, 10 bytes). */
    def uint(number: Int, value: Long): Message = {
      if (value != 0) {
        key(number, 0)
        varint(value)
      }
      this
    }

    /** A double field, not written if +0.0 (-0.0 and NaN are). */
    def double(number: Int, value: Double): Message = {
      val bits = java.lang.Double.doubleToRawLongBits(value)
      if (bits != 0) {
        key(number, 1)
        fixed64(bits)
      }
      this
    }

    /** A float field (the double rounded to float32), not written if 0. */
    def float(number: Int, value: Double): Message = {
      if (value != 0) {
        key(number, 5)
        fixed32(java.lang.Float.floatToRawIntBits(value.toFloat))
      }
      this
    }

    /** A string field in UTF-8, not written if empty. */
    def text(number: Int, value: String): Message = {
      val bytes = value.getBytes(UTF_8)
      if (bytes.nonEmpty) {
        key(number, 2)
        varint(bytes.length.toLong)
        out.write(bytes)
      }
      this
    }

    /** A message field written by `fill`; not written if empty, unless `always`. */
    def message(number: Int, always: Boolean = false)(fill: Message => Unit): Message = {
      val body = new Message
      fill(body)
      val bytes = body.bytes
      if (bytes.nonEmpty || always) {
        key(number, 2)
        varint(bytes.length.toLong)
        out.write(bytes)
      }
      this
    }
  }

  private def histogram(out: Message, h: Histogram): Unit = {
    out.uint(1, h.numNaN)
    for (b <- h.buckets) out.message(3, always = true) {
      _.double(1, b.low).double(2, b.high).double(4, b.count)
    }
    out.uint(4, h.kind.toLong)
  }

  private def weightedCommon(out: Message, w: WeightedCommon): Unit =
    out.double(1, w.numNonMissing).double(2, w.numMissing).double(3, w.avgNumValues)
      .double(4, w.totNumValues)

  private def common(out: Message, c: Common): Unit = {
    out.uint(1, c.numNonMissing).uint(2, c.numMissing).uint(3, c.minNumValues)
      .uint(4, c.maxNumValues).float(5, c.avgNumValues)
    c.numValuesHistogram.foreach(h => out.message(6, always = true)(histogram(_, h)))
    c.weighted.foreach(w => out.message(7, always = true)(weightedCommon(_, w)))
    for (p <- c.presence) out.message(10, always = true) {
      _.uint(1, p.numNonMissing).uint(2, p.numMissing).uint(3, p.minNumValues)
        .uint(4, p.maxNumValues).uint(5, p.totNumValues)
    }
    c.weightedPresence.foreach(w => out.message(11, always = true)(weightedCommon(_, w)))
    out.uint(8, c.totNumValues)
  }

  // The top values (as field `number` of `out`), then the rank histogram's body is `buckets`'.
  private def topValues(out: Message, top: Counted, number: Int): Unit =
    for ((value, count) <- top)
      out.message(number, always = true)(_.text(2, value).double(3, count))

  private def rankBuckets(out: Message, rank: Counted): Unit =
    for (((label, count), i) <- rank.zipWithIndex) out.message(1, always = true) {
      _.uint(1, i.toLong).uint(2, i.toLong).text(4, label).double(5, count)
    }

  private def feature(out: Message, f: Feature): Unit = {
    out.message(8, always = true)(path => f.path.foreach(path.text(1, _)))
    out.uint(2, f.kind.toLong)
    if (f.numeric.isDefined) out.message(3, always = true) { stats =>
      val n = f.numeric.get
      stats.message(1, always = true)(common(_, f.common))
      stats.double(2, n.mean).double(3, n.stdDev).uint(4, n.numZeros).double(5, n.min)
        .double(6, n.median).double(7, n.max)
      n.histograms.foreach(h => stats.message(8, always = true)(histogram(_, h)))
      n.weighted.foreach(w =>
        stats.message(9, always = true) { weighted =>
          weighted.double(1, w.mean).double(2, w.stdDev).double(3, w.median)
          w.histograms.foreach(h => weighted.message(4, always = true)(histogram(_, h)))
        })
    }
    else if (f.strings.isDefined) out.message(4, always = true) { stats =>
      val s = f.strings.get
      stats.message(1, always = true)(common(_, f.common))
      stats.uint(2, s.unique)
      topValues(stats, s.topValues, 3)
      stats.float(4, s.avgLength)
      if (s.rank.nonEmpty) stats.message(5, always = true)(rankBuckets(_, s.rank))
      // WeightedStringStatistics numbers its top values 1 and its rank histogram 2; none, as
      // TFDV's, where no value weighs enough
      for ((top, rank) <- s.weighted) stats.message(6) { weighted =>
        topValues(weighted, top, 1)
        if (rank.nonEmpty) weighted.message(2, always = true)(rankBuckets(_, rank))
      }
      stats.uint(8, s.invalidUtf8)
    }
    else if (f.kind == StructType) out.message(7, always = true) {
      _.message(1, always = true)(common(_, f.common))
    }
    for ((name, h) <- f.custom) out.message(6, always = true) { custom =>
      custom.text(1, name).message(4, always = true)(histogram(_, h))
    }
  }
}
