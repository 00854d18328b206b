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
   * What the data source tells Spark it supports: [[supportsDataType]], and maps at any depth,
   * which Spark would otherwise refuse with its own `UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE`,
   * without the column: [[validate]] refuses them with ours, naming the column.
   */
  def supportsOrExplains(dataType: DataType): Boolean =
    supportsDataType(dataType) || mapIn(dataType, "").isDefined

  /** The first map in `dataType` (a column's type, the column `column`): its path and type. */
  private def mapIn(dataType: DataType, column: String): Option[(String, MapType)] =
    dataType match {
      case m: MapType => Some(column -> m)
      case ArrayType(e, _) => mapIn(e, column)
      case s: StructType =>
        s.fields.iterator.map(f =>
          mapIn(f.dataType,
            if (column.isEmpty) f.name
            else s"$column.${f.name}")).collectFirst { case Some(found) => found }
      case _ => None
    }

  /**
   * Refuses a map column, or a struct or array column with a map inside, naming the map's path
   * (`props`, `meta.tags`): a feature has no kind a map could take.
   */
  def rejectMaps(schema: StructType, recordType: RecordType): Unit =
    mapIn(schema, "").foreach { case (path, map) =>
      val column = path.takeWhile(_ != '.')
      val where =
        if (path != column) s"Field '$path' of column '$column' has type"
        else if (schema(column).dataType == map) s"Column '$path' has type"
        else s"Column '$path' (${schema(column).dataType.simpleString}) holds a"
      val use = if (path == column) path else s"`$path`"
      throw TFRecordError.argument(TFRecordError.UnsupportedType,
        s"$where ${map.simpleString}, which TFRecord cannot hold: a tf.train.Example " +
          "feature is a flat list of one kind (int64, float or bytes), and a map has no " +
          "TensorFlow kind. Store its keys and values as two array columns " +
          s"(map_keys($use), map_values($use)), or the map as a JSON string (to_json($use)).",
        "column" -> path, "type" -> map.simpleString, "recordType" -> recordType.name)
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
