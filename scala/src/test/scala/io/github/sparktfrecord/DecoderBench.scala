package io.github.sparktfrecord

import java.lang.management.ManagementFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.{ExampleDeserializer, FeaturePaths}
import io.github.sparktfrecord.codec.{NestedRowAssembler, NestedRowDecoder, RecordType, RowDecoder}

/**
 * Decoding only, one thread, records in memory: thread CPU nanoseconds per record of the fast
 * path (tried first, as the option `decoder` = `generated` reads) and of the general path alone
 * (`interpreted`), taken in alternation, on benchmarks/tfrbench's narrow record, on the wide-1000
 * record (all columns, and 10 of 1,000), on a nested record (a struct and an array of structs),
 * and on the narrow records with their keys in a random order each (a layout the fast path
 * cannot predict). Run by hand:
 * `ci/sbt "spark4_213/Test/runMain io.github.sparktfrecord.DecoderBench"` (add `wide` to time the
 * wide shapes only).
 */
object DecoderBench {
  private val narrowSchema = StructType.fromDDL(
    "id bigint, label bigint, f0 float, f1 float, f2 float, f3 float, " +
      "emb array<float>, ids array<bigint>, s string")

  private def narrow(r: scala.util.Random): Array[Array[Byte]] =
    ExampleRecords.serialized(narrowSchema,
      (0 until 4096).map { i =>
        InternalRow(i.toLong, r.nextInt(2).toLong, r.nextFloat(), r.nextFloat(), r.nextFloat(),
          r.nextFloat(), new GenericArrayData(Array.fill[Any](32)(r.nextFloat() * 2 - 1)),
          new GenericArrayData(Array.fill[Any](r.nextInt(21))(r.nextInt(1000000).toLong)),
          UTF8String.fromString(java.lang.Long.toHexString(r.nextLong()).take(5 + r.nextInt(11))))
      })

  /** The records with their map entries in a random order each: a layout no record repeats. */
  private def shuffled(r: scala.util.Random, recs: Array[Array[Byte]]): Array[Array[Byte]] =
    recs.map(rec => ProtoBytes.example(r.shuffle(ExampleRecords.entries(rec)): _*))

  private val wideSchema = StructType((0 until 1000).map(i =>
    StructField(f"w$i%04d", if (i % 2 == 0) FloatType else LongType)))

  private def wide(r: scala.util.Random): Array[Array[Byte]] =
    ExampleRecords.serialized(wideSchema,
      (0 until 256).map { _ =>
        InternalRow((0 until 1000).map(i =>
          if (i % 2 == 0) r.nextFloat(): Any else (r.nextLong() & 1073741823L): Any): _*)
      })

  private val nestedSchema = StructType.fromDDL(
    "id bigint, image struct<height: int, width: int, format: string>, " +
      "objects array<struct<label: bigint, score: float, bbox: struct<x: float, y: float>>>")

  private def nested(r: scala.util.Random): Array[Array[Byte]] =
    ExampleRecords.serialized(nestedSchema,
      (0 until 4096).map { i =>
        val objects = Array.fill[Any](1 + r.nextInt(5))(InternalRow(r.nextInt(80).toLong,
          r.nextFloat(), InternalRow(r.nextFloat(), r.nextFloat())))
        InternalRow(i.toLong,
          InternalRow(r.nextInt(1000), r.nextInt(1000),
            UTF8String.fromString("jpeg")), new GenericArrayData(objects))
      })

  /** The decoder of `schema`, nested or flat, trying the fast path or not. */
  private def decoder(schema: StructType, fastPath: Boolean): RowDecoder =
    if (!FeaturePaths.isNested(schema)) {
      new ExampleDeserializer(schema, RecordType.Example, "mem", fastPath = fastPath)
    } else {
      val leaves = FeaturePaths.leaves(schema, RecordType.Example, "/")
      new NestedRowDecoder(
        new ExampleDeserializer(FeaturePaths.flatSchema(leaves), RecordType.Example, "mem",
          -1, leaves.map(_.column).toArray, fastPath),
        new NestedRowAssembler(schema, leaves, RecordType.Example, "mem"))
    }

  private val threads = ManagementFactory.getThreadMXBean

  /** CPU nanoseconds per record of one pass over `data` (repeated to `n` records). */
  private def time(d: RowDecoder, data: Array[Array[Byte]], n: Int): Double = {
    val t0 = threads.getCurrentThreadCpuTime
    var i = 0
    var sink = 0L
    while (i < n) {
      val rec = data(i % data.length)
      sink += d.decode(rec, 0, rec.length, 0L).getSizeInBytes
      i += 1
    }
    if (sink == 42) println()
    (threads.getCurrentThreadCpuTime - t0).toDouble / n
  }

  private def median(xs: Seq[Double]): Double = xs.sorted.apply(xs.size / 2)

  def main(args: Array[String]): Unit = {
    val r = new scala.util.Random(1)
    val narrowData = narrow(r)
    val wideData = wide(r)
    val nestedData = nested(r)
    val ten = StructType(wideSchema.fields.indices.filter(_ % 100 == 0).map(wideSchema(_)))
    val cases = Seq(
      ("narrow, all 9 columns", narrowSchema, narrowData, 400000),
      ("narrow, keys shuffled", narrowSchema, shuffled(r, narrowData), 400000),
      ("wide-1000, all columns", wideSchema, wideData, 4000),
      ("wide-1000, 10 of 1000", ten, wideData, 40000),
      ("nested", nestedSchema, nestedData, 200000))
    // An argument picks the shapes whose label contains it.
    for ((label, schema, data, n) <- cases if args.forall(a => label.contains(a))) {
      val fast = decoder(schema, fastPath = true)
      val general = decoder(schema, fastPath = false)
      val f = Seq.newBuilder[Double]
      val g = Seq.newBuilder[Double]
      for (round <- 0 until 15) {
        val a = time(fast, data, n)
        val b = time(general, data, n)
        if (round >= 3) { f += a; g += b } // the first rounds warm the JIT up
      }
      val (fs, gs) = (f.result(), g.result())
      val ratios = fs.zip(gs).map { case (a, b) => b / a }
      println(f"$label%-24s fast ${median(fs)}%8.1f ns/record (${fs.min}%.1f-${fs.max}%.1f)" +
        f"  general ${median(gs)}%8.1f (${gs.min}%.1f-${gs.max}%.1f)" +
        f"  speed-up ${median(ratios)}%.2f (${ratios.min}%.2f-${ratios.max}%.2f)")
    }
  }
}
