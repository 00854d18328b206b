package io.github.sparktfrecord.codec

import org.apache.spark.sql.types._

import io.github.sparktfrecord.TFRecordError

/** Which Spark types map to TFRecord features, per record type, with the errors that say so. */
private[sparktfrecord] object TFRecordSchema {

  /** The column of a `ByteArray` record type. */
  final val ByteArrayColumn = "byteArray"

  /** Types one feature value maps to: those with an entry in the [[TypeTable]]. */
  def isScalar(dataType: DataType): Boolean = TypeTable.entry(dataType).isDefined

  /** Spark ML's vectors: [[TypeTable.isVector]]. */
  def isVector(dataType: DataType): Boolean = TypeTable.isVector(dataType)

  /**
   * Any type some record type can hold, structs and arrays of structs included (see
   * [[FeaturePaths]]); the record type narrows it in [[validate]].
   */
  def supportsDataType(dataType: DataType): Boolean = dataType match {
    case s: StructType => s.fields.forall(f => supportsDataType(f.dataType))
    case ArrayType(s: StructType, _) => supportsDataType(s)
    case t => TypeTable.column(t).isDefined
  }

  /**
   * What the data source tells Spark it supports: [[supportsDataType]], and maps, variants and
   * intervals at any depth, which Spark would otherwise refuse with its own
   * `UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE`, without the column or an alternative: [[rejectMaps]]
   * refuses them with ours, naming the column and the one line to use instead.
   */
  def supportsOrExplains(dataType: DataType): Boolean =
    supportsDataType(dataType) || unheldIn(dataType, "").isDefined

  /**
   * A type no feature kind holds but that has a plain alternative (maps, `VARIANT`, ANSI
   * intervals): what to use instead, for a column or field `use` (`props`, `` `meta.tags` ``).
   */
  private def alternative(dataType: DataType, use: String): Option[String] = dataType match {
    case m: MapType => Some(s"a map has no TensorFlow kind. Store its keys and values as two " +
        s"array columns (map_keys($use), map_values($use)), or the map as a JSON string " +
        s"(to_json($use))")
    case v if v.typeName == "variant" =>
      Some("a variant is Spark's own binary encoding, " +
        s"which TensorFlow cannot read. Store it as its JSON text (to_json($use)), and read " +
        "that back as a variant with parse_json")
    case i @ (_: YearMonthIntervalType | _: DayTimeIntervalType) => Some("an interval has " +
        s"no TensorFlow kind. Store it as its text (cast($use AS string)), and read that back " +
        s"with cast(text AS ${i.simpleString})")
    case _ => None
  }

  /** The first type in `dataType` (the column `column`'s) with an [[alternative]]. */
  private def unheldIn(dataType: DataType, column: String): Option[(String, DataType)] =
    dataType match {
      case ArrayType(e, _) => unheldIn(e, column)
      case s: StructType =>
        s.fields.iterator.map(f =>
          unheldIn(f.dataType,
            if (column.isEmpty) f.name
            else s"$column.${f.name}")).collectFirst { case Some(found) => found }
      case t if alternative(t, "").isDefined => Some(column -> t)
      case _ => None
    }

  /**
   * Refuses a column of a map, variant or interval, or a struct or array column with one
   * inside, naming its path (`props`, `meta.tags`) and the one line to use instead: a feature
   * has no kind such a value could take.
   */
  def rejectMaps(schema: StructType, recordType: RecordType): Unit =
    unheldIn(schema, "").foreach { case (path, t) =>
      val column = path.takeWhile(_ != '.')
      val what = if (t.typeName.startsWith("interval")) "an" else "a"
      val where =
        if (path != column) s"Field '$path' of column '$column' has type"
        else if (schema(column).dataType == t) s"Column '$path' has type"
        else s"Column '$path' (${schema(column).dataType.simpleString}) holds $what"
      val use = if (path == column) path else s"`$path`"
      throw TFRecordError.argument(TFRecordError.UnsupportedType,
        s"$where ${t.simpleString}, which TFRecord cannot hold: a tf.train.Example " +
          "feature is a flat list of one kind (int64, float or bytes), and " +
          s"${alternative(t, use).get}.",
        "column" -> path, "type" -> t.simpleString, "recordType" -> recordType.name)
    }

  /**
   * Checks a whole schema against a record type, on the driver, so that an unsupported column
   * fails before any data is read or written. `sparseVectors`: a write with `vectorLayout`
   * `sparse`, whose vectors' three features must not meet other columns' names.
   */
  def validate(
      schema: StructType,
      recordType: RecordType,
      writing: Boolean,
      separator: String = FeaturePaths.DefaultSeparator,
      sparseVectors: Boolean = false): Unit = {
    rejectMaps(schema, recordType)
    recordType match {
      case RecordType.ByteArray =>
        val ok = if (writing) schema.length == 1 && schema.head.dataType == BinaryType
        else schema.forall(f => f.name == ByteArrayColumn && f.dataType == BinaryType)
        if (!ok) {
          throw TFRecordError.argument(TFRecordError.InvalidSchema,
            s"recordType ByteArray ${if (writing) "writes" else "reads"} exactly one binary " +
              "column " +
              s"(named '$ByteArrayColumn' on read), but the schema is ${schema.simpleString}.",
            "schema" -> schema.simpleString)
        }
      case RecordType.Example =>
        // Split as written, so that a ragged feature's name meeting a column's is refused.
        FeaturePaths.leaves(schema, recordType, separator, sparseVectors, splitRagged = true)
          .foreach { l =>
            if (!supportsDataType(l.dataType)) throw unsupported(l.column, l.dataType, recordType)
          }
      case RecordType.SequenceExample =>
        FeaturePaths.leaves(schema, recordType, separator, sparseVectors).foreach { l =>
          // A feature list holds lists: two levels, no deeper.
          if (!supportsDataType(l.dataType) || TypeTable.depth(l.dataType) > 2) {
            throw unsupported(l.column, l.dataType, recordType)
          }
        }
    }
  }

  def unsupported(column: String, dataType: DataType, recordType: RecordType): Exception = {
    val hint = dataType match {
      case ArrayType(ArrayType(ArrayType(_, _), _), _)
        if recordType == RecordType.SequenceExample =>
        " Deeper lists of lists are written ragged with recordType Example."
      case _ => ""
    }
    TFRecordError.argument(TFRecordError.UnsupportedType,
      s"Column '$column' has type ${dataType.simpleString}, which recordType ${recordType.name} " +
        s"cannot hold. Supported: ${TypeTable.describeSupported}; arrays of these" +
        (if (recordType == RecordType.SequenceExample) {
           ", arrays of such arrays (feature lists)"
         } else ", arrays of arrays of these at any depth (ragged)") +
        ", and structs and arrays of structs of these (path-named features)." + hint,
      "column" -> column, "type" -> dataType.simpleString, "recordType" -> recordType.name)
  }
}
