package io.github.sparktfrecord.sql

import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeReference}
import org.apache.spark.sql.catalyst.expressions.{AttributeSet, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.ProjectionOverSchema
import org.apache.spark.sql.catalyst.expressions.SchemaPruning.{identifyRootFields, pruneSchema}
import org.apache.spark.sql.catalyst.planning.ScanOperation
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.{FileFormat, HadoopFsRelation}
import org.apache.spark.sql.execution.datasources.LogicalRelation
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

import io.github.sparktfrecord.codec.FeaturePaths

/**
 * Nested column pruning for TFRecord scans. Spark narrows struct columns to the fields a query
 * uses for Parquet and ORC only (its `SchemaPruning` rule checks the format's class), so without
 * this rule `select("image.height")` would make the scan decode every feature of `image`,
 * `image/encoded` included. With it, the scan's schema holds only the fields used, and the
 * features of the others are skipped on the wire like unselected columns.
 *
 * The same steps as Spark's rule, for relations of our format: find the root fields the
 * projections and filters use (catalyst's public `SchemaPruning`), narrow the data schema to
 * them, and rewrite the plan above onto the narrowed relation. Honours
 * `spark.sql.optimizer.nestedSchemaPruning.enabled`. Installed by [[TFRecordExtensions]].
 */
object TFRecordSchemaPruning extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!SQLConf.get.nestedSchemaPruningEnabled) plan
    else plan transformDown {
      case op @ ScanOperation(projects, filtersStayUp, filtersPushDown, relation: LogicalRelation)
        if ours(relation) =>
        val filters = filtersPushDown.reduceOption(And).toSeq ++ filtersStayUp
        prune(relation, projects, filters).getOrElse(op)
    }

  private def ours(relation: LogicalRelation): Boolean = relation.relation match {
    case fs: HadoopFsRelation =>
      isTFRecord(fs.fileFormat) && FeaturePaths.isNested(fs.dataSchema)
    case _ => false
  }

  /** Whether `format` is the `tfrecord` data source's (its registered short name). */
  private def isTFRecord(format: FileFormat): Boolean = format match {
    case source: DataSourceRegister => source.shortName() == "tfrecord"
    case _ => false
  }

  private def prune(
      relation: LogicalRelation,
      projects: Seq[NamedExpression],
      filters: Seq[Expression]): Option[LogicalPlan] = {
    val fs = relation.relation.asInstanceOf[HadoopFsRelation]
    // Attributes as the relation spells them, whatever the case the query used.
    val names = relation.output.map(a => a.exprId -> a.name).toMap
    def normalize(e: Expression): Expression = e.transform {
      case a: AttributeReference if names.contains(a.exprId) => a.withName(names(a.exprId))
    }
    val normalizedProjects = projects.map(normalize(_).asInstanceOf[NamedExpression])
    val normalizedFilters = filters.map(normalize)
    val roots = identifyRootFields(normalizedProjects, normalizedFilters)
    if (!roots.exists(!_.derivedFromAtt)) return None
    val pruned = withMetadata(pruneSchema(fs.dataSchema, roots), fs.dataSchema)
      .asInstanceOf[StructType]
    if (countLeaves(pruned) >= countLeaves(fs.dataSchema)) return None

    val prunedFs = fs.copy(dataSchema = pruned)(fs.sparkSession)
    val output = relation.output.map { a =>
      pruned.find(_.name == a.name).map(f => a.withDataType(f.dataType)).getOrElse(a)
    }
    val prunedRelation = relation.copy(relation = prunedFs, output = output)
    val projection = ProjectionOverSchema(pruned, AttributeSet(relation.output))
    def onto(e: Expression): Expression = e.transformDown { case projection(x) => x }
    val child = if (normalizedFilters.isEmpty) prunedRelation
    else Filter(normalizedFilters.map(onto).reduce(And), prunedRelation)
    val newProjects = normalizedProjects.map(onto(_).asInstanceOf[NamedExpression])
    Some(Project(restoreNames(newProjects, projects.map(_.name)), child))
  }

  // As Spark's SchemaUtils.restoreOriginalOutputNames, which is private to Spark.
  private def restoreNames(
      projects: Seq[NamedExpression],
      names: Seq[String]): Seq[NamedExpression] =
    projects.zip(names).map {
      case (a: Attribute, name) => a.withName(name)
      case (a: Alias, name) => a.withName(name)
      case (other, _) => other
    }

  /**
   * `pruned` with the field metadata of `full`, which `pruneSchema` drops below the top level
   * (a fixed list length, the features of a TFDS dataset).
   */
  private def withMetadata(pruned: DataType, full: DataType): DataType = (pruned, full) match {
    case (p: StructType, f: StructType) => StructType(p.fields.map { field =>
        f.find(_.name == field.name).map { original =>
          field.copy(dataType = withMetadata(field.dataType, original.dataType),
            metadata = original.metadata)
        }.getOrElse(field)
      })
    case (p: ArrayType, f: ArrayType) =>
      p.copy(elementType = withMetadata(p.elementType, f.elementType))
    case (p: MapType, f: MapType) =>
      p.copy(keyType = withMetadata(p.keyType, f.keyType),
        valueType = withMetadata(p.valueType, f.valueType))
    case _ => pruned
  }

  private def countLeaves(dataType: DataType): Int = dataType match {
    case a: ArrayType => countLeaves(a.elementType)
    case m: MapType => countLeaves(m.keyType) + countLeaves(m.valueType)
    case s: StructType => s.fields.map(f => countLeaves(f.dataType)).sum
    case _ => 1
  }
}
