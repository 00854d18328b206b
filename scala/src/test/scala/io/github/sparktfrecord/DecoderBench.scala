package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.{ExampleDecoderGenerator, GeneratedExampleDecoder, RecordType}
import io.github.sparktfrecord.codec.{RowDecoder, TFRecordDeserializer, TFRecordSerializer}
import io.github.sparktfrecord.framing.TFRecordFraming

/**
 * Decoding only, one thread, records in memory: nanoseconds per record of the generated decoder
 * and the interpreter, taken in alternation, on benchmarks/tfrbench's narrow record and on the
 * wide-1000 record (all columns, and 10 of 1,000). Run by hand:
 * `ci/sbt "spark35_212/Test/runMain io.github.sparktfrecord.DecoderBench"`.
 */
object DecoderBench {
  private def records(schema: StructType, rows: Seq[InternalRow]): Array[Array[Byte]] = {
    val serializer = new TFRecordSerializer(schema, RecordType.Example)
    rows.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }.toArray
  }

  private val narrowSchema = StructType.fromDDL(
    "id bigint, label bigint, f0 float, f1 float, f2 float, f3 float, " +
      "emb array<float>, ids array<bigint>, s string")

  private def narrow(r: scala.util.Random): Array[Array[Byte]] =
    records(narrowSchema,
      (0 until 4096).map { i =>
        InternalRow(i.toLong, r.nextInt(2).toLong, r.nextFloat(), r.nextFloat(), r.nextFloat(),
          r.nextFloat(), new GenericArrayData(Array.fill[Any](32)(r.nextFloat() * 2 - 1)),
          new GenericArrayData(Array.fill[Any](r.nextInt(21))(r.nextInt(1000000).toLong)),
          UTF8String.fromString(java.lang.Long.toHexString(r.nextLong()).take(5 + r.nextInt(11))))
      })

  private val wideSchema = StructType((0 until 1000).map(i =>
    StructField(f"w$i%04d", if (i % 2 == 0) FloatType else LongType)))

  private def wide(r: scala.util.Random): Array[Array[Byte]] =
    records(wideSchema,
      (0 until 256).map { _ =>
        InternalRow((0 until 1000).map(i =>
          if (i % 2 == 0) r.nextFloat(): Any else (r.nextLong() & 1073741823L): Any): _*)
      })

  /** Nanoseconds per record of one pass over `data` (repeated to `n` records). */
  private def time(d: RowDecoder, data: Array[Array[Byte]], n: Int): Double = {
    val t0 = System.nanoTime()
    var i = 0
    var sink = 0L
    while (i < n) {
      val rec = data(i % data.length)
      sink += d.deserialize(rec, 0, rec.length, 0L).getSizeInBytes
      i += 1
    }
    if (sink == 42) println()
    (System.nanoTime() - t0).toDouble / n
  }

  private def median(xs: Seq[Double]): Double = xs.sorted.apply(xs.size / 2)

  def main(args: Array[String]): Unit = {
    val r = new scala.util.Random(1)
    val narrowData = narrow(r)
    val wideData = wide(r)
    val ten = StructType(wideSchema.fields.indices.filter(_ % 100 == 0).map(wideSchema(_)))
    val cases = Seq(
      ("narrow, all 9 columns", narrowSchema, narrowData, 400000),
      ("wide-1000, all columns", wideSchema, wideData, 4000),
      ("wide-1000, 10 of 1000", ten, wideData, 40000))
    for ((label, schema, data, n) <- cases) {
      val gen = ExampleDecoderGenerator.decoder(schema, RecordType.Example, "mem", -1, null, true)
      val int = new TFRecordDeserializer(schema, RecordType.Example, "mem")
      require(gen.isInstanceOf[GeneratedExampleDecoder])
      val g = Seq.newBuilder[Double]
      val it = Seq.newBuilder[Double]
      for (round <- 0 until 15) {
        val a = time(gen, data, n)
        val b = time(int, data, n)
        if (round >= 3) { g += a; it += b } // the first rounds warm the JIT up
      }
      val (gs, is) = (g.result(), it.result())
      val ratios = gs.zip(is).map { case (a, b) => b / a }
      println(f"$label%-24s generated ${median(gs)}%8.1f ns/record (${gs.min}%.1f-${gs.max}%.1f)" +
        f"  interpreted ${median(is)}%8.1f (${is.min}%.1f-${is.max}%.1f)" +
        f"  speed-up ${median(ratios)}%.2f (${ratios.min}%.2f-${ratios.max}%.2f)")
    }
  }
}
