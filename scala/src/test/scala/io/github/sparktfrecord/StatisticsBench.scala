package io.github.sparktfrecord

import java.lang.management.ManagementFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.sql.StatisticsAggregator

/**
 * The jar engine's statistics alone, one thread, rows in memory: thread CPU milliseconds of 8
 * tasks' [[StatisticsAggregator]] over benchmarks/tfrbench's narrow rows (125,000 rows each, as
 * unsafe rows), and of the driver's merge of their figures, round by round, for every column,
 * the numbers alone and the string alone. Run by hand:
 * `ci/sbt "spark4_213/Test/runMain io.github.sparktfrecord.StatisticsBench"` (add `all`,
 * `numbers` or `strings` to time one of them).
 */
object StatisticsBench {
  private val schema = StructType.fromDDL(
    "id bigint, label bigint, f0 float, f1 float, f2 float, f3 float, " +
      "emb array<float>, ids array<bigint>, s string")

  private val Tasks = 8
  private val RowsPerTask = 125000

  private def rows(r: scala.util.Random): Array[Array[UnsafeRow]] = {
    val project = UnsafeProjection.create(schema)
    def float() = r.nextFloat() * 2 - 1
    Array.tabulate(Tasks) { t =>
      Array.tabulate(RowsPerTask) { k =>
        project(InternalRow((t * RowsPerTask + k).toLong, r.nextInt(2).toLong, float(), float(),
          float(), float(), new GenericArrayData(Array.fill[Any](32)(float())),
          new GenericArrayData(Array.fill[Any](r.nextInt(21))(r.nextInt(1000000).toLong)),
          UTF8String.fromString(java.lang.Long.toHexString(r.nextLong()).take(5 + r.nextInt(11)))))
          .copy()
      }
    }
  }

  def main(args: Array[String]): Unit = {
    val all = rows(new scala.util.Random(7))
    val shapes = Map(
      "all" -> schema.fieldNames.toSeq,
      "numbers" -> schema.fieldNames.toSeq.filter(_ != "s"),
      "strings" -> Seq("s"))
    val which = if (args.isEmpty) Seq("all", "numbers", "strings") else args.toSeq
    val inputs = which.map { name =>
      val columns = shapes(name)
      val project = UnsafeProjection.create(
        columns.map(c => BoundReference(schema.fieldIndex(c), schema(c).dataType, true)))
      (name, StructType(columns.map(schema(_))), all.map(_.map(row => project(row).copy())))
    }
    val threads = ManagementFactory.getThreadMXBean
    for (round <- 0 until 12; (name, columns, tasks) <- inputs) {
      val start = threads.getCurrentThreadCpuTime
      val parts = tasks.map { task =>
        val aggregator = new StatisticsAggregator(columns, "")
        task.foreach(aggregator.add)
        aggregator.result()
      }
      val aggregated = threads.getCurrentThreadCpuTime
      val merge = new StatisticsAggregator.Merged(columns)
      parts.foreach(merge.add)
      val figures = merge.written(1000)
      val merged = threads.getCurrentThreadCpuTime
      println(f"round $round%2d $name%8s: tasks ${(aggregated - start) / 1e6}%7.1f ms, " +
        f"merge ${(merged - aggregated) / 1e6}%6.1f ms; their figures " +
        f"${parts.map(_.length.toLong).sum / 1e6}%.1f MB, merged ${figures.length} bytes")
    }
  }
}
