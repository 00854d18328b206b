package io.github.sparktfrecord.tfds

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, MonotonicallyIncreasingID}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.catalyst.plans.logical.{RepartitionByExpression, Sort, Window}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand
import org.apache.spark.sql.sources.DataSourceRegister

import io.github.sparktfrecord.SparkShims
import io.github.sparktfrecord.sql.TFRecordOptions

/**
 * Balanced shards for `df.write.format("tfrecord").option("numShards", n)` from Scala and SQL:
 * the write's query is replaced by [[TFRecordShards.arrange]] of it (with `shuffleSeed` when
 * given), so that the n files' record counts differ by at most one. Not for partitioned or
 * bucketed writes, which the write refuses with `numShards`. Installed by
 * [[io.github.sparktfrecord.TFRecordExtensions]]; the write refuses `shuffleSeed` without it.
 *
 * An optimizer rule runs to a fixed point (and in two batches), and a write that the Python
 * helpers or [[TFDS.write]] arranged already comes with `numShards` too: a query that is
 * already arranged is recognised by its shape and left as it is. Arranged means that the rows
 * reach the writer as the arrangement's repartition left them, only projected and sorted within
 * partitions: below Projects and Sorts, a repartition into `numShards` partitions by one column
 * named [[TFRecordShards.RouteColumn]] (behind `_`s), of the rows as they were numbered (only
 * Projects down to the numbering). Nothing else makes that shape; a query that arranges and
 * then joins or filters is arranged again. The rule also marks the command
 * with [[TFRecordShards.ArrangedOption]], which tells the write that `shuffleSeed` was honoured.
 */
case class TFRecordShardsRule(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan transformDown {
    case cmd: InsertIntoHadoopFsRelationCommand if applies(cmd) =>
      val parsed = new TFRecordOptions(cmd.options)
      val n = parsed.numShards.get
      val query = if (isArranged(cmd.query, n)) cmd.query
      else {
        val arranged = TFRecordShards.arrange(SparkShims.ofRows(session, cmd.query), n,
          parsed.shuffleSeed).queryExecution.analyzed
        // The command names the query's output attributes: keep them.
        if (arranged.output.map(_.exprId) == cmd.query.output.map(_.exprId)) arranged
        else {
          val named = arranged.output.zip(cmd.query.output).map { case (a, o) =>
            Alias(a, o.name)(o.exprId)
          }
          Project(named, arranged)
        }
      }
      cmd.copy(query = query, options = cmd.options + (TFRecordShards.ArrangedOption -> "true"))
  }

  private def applies(cmd: InsertIntoHadoopFsRelationCommand): Boolean = {
    val options = CaseInsensitiveMap(cmd.options)
    isTFRecord(cmd) && options.contains(TFRecordOptions.NumShardsOption) &&
      !options.contains(TFRecordShards.ArrangedOption) && cmd.partitionColumns.isEmpty &&
      cmd.bucketSpec.isEmpty
  }

  private def isTFRecord(cmd: InsertIntoHadoopFsRelationCommand): Boolean =
    cmd.fileFormat match {
      case source: DataSourceRegister => source.shortName() == "tfrecord"
      case _ => false
    }

  private def isArranged(query: LogicalPlan, numShards: Int): Boolean = query match {
    case p: Project => isArranged(p.child, numShards)
    case s: Sort if !s.global => isArranged(s.child, numShards)
    case r: RepartitionByExpression =>
      r.optNumPartitions.contains(numShards) && numbered(r.child) &&
        (r.partitionExpressions match {
          case Seq(e) => e.references.toSeq.map(_.name) match {
              case Seq(name) => name.dropWhile(_ == '_') == TFRecordShards.RouteColumn.drop(1)
              case _ => false
            }
          case _ => false
        })
    case _ => false
  }

  /**
   * Whether the rows below the route are the ones numbered, nothing between but Projects: the
   * window that numbers them by key (with a seed), or the Project that gives them their input
   * position (without). A Filter after the arrangement, which Spark pushes down to there, is
   * no arrangement.
   */
  private def numbered(plan: LogicalPlan): Boolean = plan match {
    case _: Window => true
    case p: Project =>
      p.projectList.exists(_.find(_.isInstanceOf[MonotonicallyIncreasingID]).isDefined) ||
        numbered(p.child)
    case _ => false
  }
}
