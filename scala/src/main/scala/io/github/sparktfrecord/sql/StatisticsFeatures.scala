package io.github.sparktfrecord.sql

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.{FeaturePaths, RecordType, TypeTable}
import io.github.sparktfrecord.codec.FeaturePaths.Leaf
import io.github.sparktfrecord.sql.{StatisticsProto => P}

/**
 * The features the statistics take, as the jar writes them from a DataFrame: one column per
 * feature (a struct's leaves by their path, a list of lists as its ragged features, a
 * SequenceExample's feature list as its values and its steps' lengths), each with its TFDV type
 * and the SQL that reads it as the record holds it. The Python side's `statistics_features` and
 * `statistics_sequence` select the same columns by the same SQL.
 */
private[sparktfrecord] object StatisticsFeatures {

  /** A feature: name, TFDV type, SQL over `{x}` of a value and of a list's values ("": scalar). */
  final case class Column(name: String, kind: Int, value: String = "", values: String = "")

  /** `df` as one column per feature; per feature the column it is of; the feature lists. */
  final case class Selected(df: DataFrame, of: Map[String, String], lists: Seq[String])

  /** The STRUCT feature TFDV puts the feature lists under (tfx_bsl's sequence feature column). */
  final val Sequence = "##SEQUENCE##"

  /** The prefix of a feature list's steps' lengths' column (a feature named so is refused). */
  final val Steps = "##STEPS##/"

  /** Per family of Spark types: the TFDV type, the SQL of a value and of a list's values. */
  private val Kinds: Map[String, (Int, String, String)] = Map(
    "boolean" ->
      ((P.IntType, "CAST(CAST({x} AS INT) AS DOUBLE)",
        "CAST(CAST({x} AS array<int>) AS array<double>)")),
    "integral" -> ((P.IntType, "CAST({x} AS DOUBLE)", "CAST({x} AS array<double>)")),
    // The jar writes a float_list: a double is rounded to float32 first.
    "fractional" ->
      ((P.FloatType, "CAST(CAST({x} AS FLOAT) AS DOUBLE)",
        "CAST(CAST({x} AS array<float>) AS array<double>)")),
    "bytes" -> ((P.StringType, "CAST({x} AS BINARY)", "CAST({x} AS array<binary>)")),
    "date" ->
      ((P.IntType, "CAST(unix_date({x}) AS DOUBLE)",
        "transform({x}, v -> CAST(unix_date(v) AS DOUBLE))")),
    // microseconds since 1970, as Spark holds them (not timestamp_ntz's, local ones)
    "timestamp" ->
      ((P.IntType, "CAST(unix_micros({x}) AS DOUBLE)",
        "transform({x}, v -> CAST(unix_micros(v) AS DOUBLE))")))

  private def elementOf(dataType: DataType): DataType = dataType match {
    case ArrayType(e, _) => e
    case other => other
  }

  /** The feature `name` of `dataType`; refused, naming `column`, where no record holds it. */
  def column(name: String, dataType: DataType, column: String): Column = {
    val family = elementOf(dataType) match {
      case BooleanType => "boolean"
      case ByteType | ShortType | IntegerType | LongType => "integral"
      case FloatType | DoubleType | _: DecimalType => "fractional"
      case StringType | BinaryType => "bytes"
      case DateType => "date"
      case TimestampType => "timestamp"
      case _ => throw new IllegalArgumentException(
          s"statistics: column '$column' has type ${dataType.simpleString}; the statistics take " +
            "the features the jar writes in an Example (numbers, booleans, dates, timestamps, " +
            "strings, binary, arrays and arrays of arrays of them, and structs and arrays of " +
            "structs of these). Select the others out.")
    }
    val (kind, value, values) = Kinds(family)
    Column(name, kind, value, if (dataType.isInstanceOf[ArrayType]) values else "")
  }

  /**
   * SQL of what the jar's figures read of `c` (of `dataType`), and 'f' where its doubles are
   * rounded to float32 as the jar writes them (else '-'): numbers, strings and binary as they are
   * (no array cast, which copies every list), others (booleans, decimals, dates, timestamps) by
   * the column's own SQL, as doubles.
   */
  def readAs(c: Column, dataType: DataType): (String, Char) = elementOf(dataType) match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | StringType | BinaryType =>
      (quote(c.name), '-')
    case DoubleType => (quote(c.name), 'f')
    case _ => ((if (c.values.nonEmpty) c.values else c.value).replace("{x}", quote(c.name)), '-')
  }

  /** A column's name quoted for Spark SQL. */
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"

  /** The field names down `struct` by `ordinals`, and the type reached. */
  private def names(struct: StructType, ordinals: Seq[Int]): (Seq[String], DataType) =
    ordinals.foldLeft((Seq.empty[String], struct: DataType)) { case ((found, t), i) =>
      val f = t.asInstanceOf[StructType].fields(i)
      (found :+ f.name, f.dataType)
    }

  private def sql(names: Seq[String], at: String = ""): String =
    (Seq(at).filter(_.nonEmpty) ++ names.map(quote)).mkString(".")

  /** SQL of the values the jar writes for `leaf` of `schema`. */
  def leafSql(schema: StructType, leaf: Leaf): String = {
    val (path, t) = names(schema, leaf.structs.map(_.ordinal) :+ leaf.ordinal)
    var x = sql(path)
    if (leaf.inArrayOfStructs) {
      val element = t.asInstanceOf[ArrayType].elementType.asInstanceOf[StructType]
      val (inner, _) = names(element, leaf.inElement.map(_.ordinal) :+ leaf.elementOrdinal)
      x = s"transform($x, e -> ${sql(inner, "e")})"
      if (leaf.concatenated) x = s"flatten($x)"
    }
    if (leaf.raggedLevel < 0) return x
    val d = TypeTable.depth(leaf.dataType)
    for (_ <- 0 until math.min(leaf.raggedLevel, d - 1)) x = s"flatten($x)"
    // row lengths k: the sizes of the lists at depth k+1, in order; then the innermost values
    if (leaf.raggedLevel == d - 1) x else s"transform($x, v -> CAST(size(v) AS BIGINT))"
  }

  /** `df`'s features as the jar writes them in `recordType` records. */
  def select(df: DataFrame, recordType: RecordType, separator: String): Selected =
    if (recordType == RecordType.SequenceExample) sequence(df, separator)
    else example(df, separator)

  private def example(df: DataFrame, separator: String): Selected = {
    val found = FeaturePaths.leaves(df.schema, RecordType.Example, separator, splitRagged = true)
    found.find(_.tensorPart != 0).foreach { leaf =>
      throw new IllegalArgumentException(
        s"statistics: column '${leaf.column}' holds an encoded tensor (its bytes and shape), " +
          "which the statistics do not take. Select it out.")
    }
    val of = found.map(l => l.name -> l.column).toMap
    if (found.forall(l => l.name == l.column && l.raggedLevel < 0)) Selected(df, of, Nil)
    else
      Selected(df.selectExpr(found.map(l => s"${leafSql(df.schema, l)} AS ${quote(l.name)}"): _*),
        of, Nil)
  }

  /** A feature list is two columns: its values, and its steps' lengths (named [[Steps]] +). */
  private def sequence(df: DataFrame, separator: String): Selected = {
    val of = Map.newBuilder[String, String]
    val (selected, lists) = (Seq.newBuilder[String], Seq.newBuilder[String])
    for (leaf <- FeaturePaths.leaves(df.schema, RecordType.SequenceExample, separator)) {
      var x = leafSql(df.schema, leaf)
      val levels = TypeTable.depth(leaf.dataType)
      if (leaf.name.startsWith(Steps)) throw new IllegalArgumentException(
        s"statistics: feature '${leaf.name}': '$Steps' names its own columns")
      if (levels > 2) throw new IllegalArgumentException(
        s"statistics: column '${leaf.column}' has type ${leaf.leafType.simpleString}, which " +
          "recordType SequenceExample cannot hold (a feature list is two levels: steps of " +
          "values). Deeper lists are written ragged with recordType Example.")
      of += leaf.name -> leaf.column
      if (levels < 2) selected += s"$x AS ${quote(leaf.name)}"
      else {
        if (leaf.inArrayOfStructs && !leaf.leafType.isInstanceOf[ArrayType]) {
          x = s"transform($x, v -> array(v))" // an element's single value: a step of one
        }
        lists += leaf.name
        of += (Steps + leaf.name) -> leaf.column
        selected += s"flatten($x) AS ${quote(leaf.name)}"
        selected += s"transform($x, v -> CAST(size(v) AS BIGINT)) AS ${quote(Steps + leaf.name)}"
      }
    }
    Selected(df.selectExpr(selected.result(): _*), of.result(), lists.result())
  }
}
