package io.github.sparktfrecord

import java.lang.management.ManagementFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.{ExampleSerializer, RecordType}

/**
 * Encoding only, one thread, rows in memory: the CPU time of serializing 1M unsafe rows of an
 * 11-column schema (scalars of each kind, a float and an int64 list, a string) into `Example`
 * records, best and median of the rounds after the JIT's warm-up. Run by hand, once per build
 * to compare, in alternation:
 * `ci/sbt "spark4_213/Test/runMain io.github.sparktfrecord.EncoderBench"`.
 */
object EncoderBench {
  private val schema = StructType.fromDDL(
    "id bigint, label int, day date, flag boolean, f0 float, f1 float, w double, " +
      "emb array<float>, ids array<bigint>, s string, b binary")

  private def rows(r: scala.util.Random): Array[UnsafeRow] = {
    val project = UnsafeProjection.create(schema)
    Array.tabulate(4096) { i =>
      project(InternalRow(i.toLong, r.nextInt(2), 19000 + r.nextInt(365), r.nextBoolean(),
        r.nextFloat(), r.nextFloat(), r.nextDouble(),
        new GenericArrayData(Array.fill[Any](32)(r.nextFloat() * 2 - 1)),
        new GenericArrayData(Array.fill[Any](r.nextInt(21))(r.nextInt(1000000).toLong)),
        UTF8String.fromString(java.lang.Long.toHexString(r.nextLong()).take(5 + r.nextInt(11))),
        Array.fill[Byte](8 + r.nextInt(24))(r.nextInt().toByte))).copy()
    }
  }

  private val threads = ManagementFactory.getThreadMXBean

  /** Milliseconds of this thread's CPU time to serialize `n` rows (cycling through `data`). */
  private def time(s: ExampleSerializer, data: Array[UnsafeRow], n: Int): Double = {
    val t0 = threads.getCurrentThreadCpuTime
    var i = 0
    var sink = 0L
    while (i < n) {
      sink += s.serialize(data(i & (data.length - 1)))
      i += 1
    }
    if (sink == 42) println()
    (threads.getCurrentThreadCpuTime - t0) / 1e6
  }

  def main(args: Array[String]): Unit = {
    val rounds = if (args.nonEmpty) args(0).toInt else 20
    val data = rows(new scala.util.Random(1))
    val serializer = new ExampleSerializer(schema, RecordType.Example)
    val ms = (0 until rounds + 5).map(_ => time(serializer, data, 1000000)).drop(5).sorted
    println(f"EncoderBench 1M rows, 11 columns: best ${ms.head}%.1f ms, " +
      f"median ${ms(ms.size / 2)}%.1f ms (${ms.size} rounds)")
  }
}
