package io.github.sparktfrecord.codec

import org.apache.spark.sql.types._

import io.github.sparktfrecord.TFRecordError

/**
 * How the columns of a nested schema map to the flat features of a record, by TensorFlow's own
 * convention of path-like feature names (`image/encoded`, `image/object/bbox/xmin`):
 *
 *  - a struct column becomes one feature per leaf, named by the path of field names from the
 *    column down, joined with the `pathSeparator` option (`/` by default), recursively;
 *  - an array of structs becomes one feature per leaf of its element. In an `Example` that is a
 *    list holding the leaf of every element, all of the array's length (parallel lists); a leaf
 *    that is a list is a list of lists, one per element, written ragged (below). In a
 *    `SequenceExample` it is a feature list holding one Feature per element (the steps), so a
 *    leaf may also be a list;
 *  - every other column is one feature, named by the column, as in a flat schema.
 *
 * In an `Example`, a list of lists (`array<array<…<T>>>` of depth d, a column or a leaf) is
 * written as TensorFlow Datasets writes a ragged tensor, which `tf.io.RaggedFeature` reads: d
 * features, `<name>/ragged_flat_values` (every innermost value, in order) and
 * `<name>/ragged_row_lengths_k` for k from 0 to d-2 (int64: the length of every list at depth
 * k+1, in order), [[raggedNames]]. The outermost list's length is the number of entries of
 * `ragged_row_lengths_0`.
 *
 * A list field of an array of structs in an `Example` is written as the concatenation of the
 * elements' lists when its field's metadata fixes their length ([[ListLengthKey]]): each element
 * holds exactly that many values, and the list is split back into elements on read. That is how
 * TensorFlow Datasets stores a `Sequence` of fixed-shape tensors (a `BBoxFeature` is 4 floats).
 *
 * The serializer and the deserializer work on the resulting [[Leaf]]s; a flat schema has one
 * leaf per column, each its own feature.
 */
private[sparktfrecord] object FeaturePaths {

  /** What joins the field names of a nested column's path (the `pathSeparator` option). */
  final val DefaultSeparator = "/"

  /** A struct field met on the way down: its ordinal in its parent and its own type. */
  final case class Step(ordinal: Int, struct: StructType)

  /**
   * One feature of a schema.
   *
   * @param name the feature's name
   * @param column the leaf as Spark names it (`image.object.bbox.xmin`), for messages
   * @param leafType the leaf field's own type
   * @param dataType what the flat codec reads and writes for the feature: the leaf's type, or for
   *   a leaf of an array of structs `array<T>` (Example) or `array<array<…>>` (SequenceExample)
   * @param structs the struct fields from the row down to the struct that holds `ordinal`
   * @param ordinal the leaf's ordinal, or that of the array of structs the leaf is in
   * @param element for a leaf of an array of structs, the element's type; else null
   * @param inElement the struct fields from the element down to the struct that holds the leaf
   * @param elementOrdinal the leaf's ordinal in that struct; -1 when not in an array of structs
   * @param listLength the values each list of the leaf must hold ([[ListLengthKey]]); 0: any
   * @param concatenated a list field of an array of structs in an `Example`, stored as the
   *   concatenation of the elements' lists (each of `listLength` values)
   * @param vectorPart for one of the three features of a vector written sparse, which
   *   ([[VectorIndices]], [[VectorValues]], [[VectorSize]]); 0 for every other feature
   * @param raggedLevel for one of the d features of a list of lists written ragged (as the
   *   writer sees them, `splitRagged`), which: k < d-1 for `ragged_row_lengths_k`, d-1 for
   *   `ragged_flat_values`; -1 for every other feature
   * @param tensorPart for one of the two features of an encoded tensor column (as the writer
   *   sees them, `splitRagged`), which: [[TensorValue]] or [[TensorShape]]; 0 for every other
   * @param tensor an encoded tensor column's metadata ([[TensorEncodingKey]]); else empty
   */
  final case class Leaf(
      name: String,
      column: String,
      leafType: DataType,
      dataType: DataType,
      structs: Seq[Step],
      ordinal: Int,
      element: StructType,
      inElement: Seq[Step],
      elementOrdinal: Int,
      listLength: Int = 0,
      concatenated: Boolean = false,
      vectorPart: Int = 0,
      raggedLevel: Int = -1,
      tensorPart: Int = 0,
      tensor: Metadata = Metadata.empty) {
    def inArrayOfStructs: Boolean = element != null
  }

  /**
   * The features a vector column `c` is written as with the option `vectorLayout` `sparse`,
   * `tf.io.SparseFeature`'s layout: `c/indices` (int64, increasing), `c/values` (float) and
   * `c/size` (int64, one value), each named `c`, the separator and this suffix.
   */
  final val VectorIndices = 1
  final val VectorValues = 2
  final val VectorSize = 3
  final val VectorParts: Seq[(Int, String)] =
    Seq(VectorIndices -> "indices", VectorValues -> "values", VectorSize -> "size")

  /** The feature names of the sparse layout of the vector feature `name`, in [[VectorParts]]. */
  def sparseVectorNames(name: String, separator: String): Seq[String] =
    VectorParts.map { case (_, suffix) => name + separator + suffix }

  /** The suffixes of the ragged layout's features: flat values, and row lengths then a level. */
  final val RaggedFlatValues = "ragged_flat_values"
  final val RaggedRowLengths = "ragged_row_lengths_"

  /**
   * The feature names of the ragged layout of the list of lists `name` of `depth` (d) nested
   * lists: `ragged_row_lengths_0` to `_{d-2}`, then `ragged_flat_values` (index k: level k).
   */
  def raggedNames(name: String, separator: String, depth: Int): Seq[String] =
    (0 until depth - 1).map(k => name + separator + RaggedRowLengths + k) :+
      (name + separator + RaggedFlatValues)

  /** Whether a feature of `dataType` is a list of lists written ragged in `recordType`. */
  def isRagged(dataType: DataType, recordType: RecordType): Boolean =
    recordType == RecordType.Example && TypeTable.depth(dataType) >= 2

  /**
   * The field metadata keys of a column holding a TFDS `Tensor` with an `encoding` and more than
   * one unknown dimension, `array<…<T>>` of its rank: the encoding (`bytes` or `zlib`) and the
   * numpy dtype of its values. Such a column `x` is the features `x/value` (one bytes value: the
   * values' raw little-endian bytes in C order, zlib-compressed for `zlib`) and `x/shape`
   * (int64: the size of each dimension), as `tfds.features.Tensor` stores it.
   */
  final val TensorEncodingKey = "tfrecord.tensorEncoding"
  final val TensorDtypeKey = "tfrecord.tensorDtype"
  final val TensorValue = 1
  final val TensorShape = 2

  /** The feature names of the encoded tensor column `name`: its value, then its shape. */
  def tensorNames(name: String, separator: String): Seq[String] =
    Seq(name + separator + "value", name + separator + "shape")

  /** Whether `field` holds an encoded tensor ([[TensorEncodingKey]]). */
  def isEncodedTensor(field: StructField): Boolean = field.metadata.contains(TensorEncodingKey)

  /**
   * The field metadata key (a long) that fixes how many values each list of an array field
   * holds: checked on write, and used to split a concatenated list of an array of structs.
   */
  final val ListLengthKey = "tfrecord.listLength"

  /** The fixed list length of `field`, or 0. */
  def listLength(field: StructField): Int =
    if (field.metadata.contains(ListLengthKey)) field.metadata.getLong(ListLengthKey).toInt else 0

  /** Whether some column is a struct or an array of structs (ML vectors are not structs here). */
  def isNested(schema: StructType): Boolean = schema.fields.exists(f =>
    f.dataType match {
      case _: StructType | ArrayType(_: StructType, _) => true
      case _ => false
    })

  /**
   * The features of `schema`, in the order of its fields (depth first). Fails, naming the
   * column, for an array of structs a record type cannot hold, and when two columns would be
   * written as the same feature. With `sparseVectors` (the write option `vectorLayout`
   * `sparse`), a vector column is three features, one per [[VectorParts]]. With `splitRagged`
   * (the writer's view), a list of lists in an `Example` is its d ragged features
   * ([[raggedNames]]); else one leaf, which the reader reads from them.
   */
  def leaves(
      schema: StructType,
      recordType: RecordType,
      separator: String,
      sparseVectors: Boolean = false,
      splitRagged: Boolean = false): IndexedSeq[Leaf] = {
    val sequence = recordType == RecordType.SequenceExample
    val out = IndexedSeq.newBuilder[Leaf]

    def inElement(
        struct: StructType,
        name: String,
        column: String,
        structs: Seq[Step],
        arrayOrdinal: Int,
        element: StructType,
        path: Seq[Step]): Unit =
      struct.fields.zipWithIndex.foreach { case (f, i) =>
        val leafName = name + separator + f.name
        val leafColumn = column + "." + f.name
        val length = listLength(f)
        f.dataType match {
          case s: StructType if s.isEmpty => noFields(leafColumn)
          case s: StructType =>
            inElement(s, leafName, leafColumn, structs, arrayOrdinal, element, path :+ Step(i, s))
          case t =>
            val why = t match {
              case ArrayType(_: StructType, _) =>
                Some("an array of structs inside an array of structs has no feature layout")
              case ArrayType(ArrayType(_, _), _) if sequence =>
                Some("an array of arrays inside an array of structs has no feature layout in " +
                  "a SequenceExample (recordType Example writes it ragged)")
              case _: UserDefinedType[_] => Some("a vector inside an array of structs is not " +
                  "supported; use array<float> or array<double>")
              case _ => None
            }
            why.foreach { w =>
              throw TFRecordError.argument(TFRecordError.UnsupportedType,
                s"Column '$leafColumn' has type ${t.simpleString}: $w.", "column" -> leafColumn)
            }
            // A list leaf in an Example: concatenated when its length is fixed, else ragged
            // (a list of lists, one per element).
            val concatenated = !sequence && length > 0 && TypeTable.depth(t) == 1
            val flat = t match {
              case a: ArrayType if sequence =>
                ArrayType(a.copy(containsNull = false), containsNull = false)
              case s if sequence =>
                ArrayType(ArrayType(s, containsNull = false), containsNull = false)
              case a: ArrayType if concatenated => a.copy(containsNull = false)
              case s => ArrayType(s, containsNull = false)
            }
            add(Leaf(leafName, leafColumn, t, flat, structs, arrayOrdinal, element, path, i,
              length, concatenated = concatenated))
        }
      }

    def walk(struct: StructType, prefix: String, columnPrefix: String, structs: Seq[Step]): Unit =
      struct.fields.zipWithIndex.foreach { case (f, i) =>
        val name = prefix + f.name
        val column = columnPrefix + f.name
        f.dataType match {
          case s: StructType if s.isEmpty => noFields(column)
          case ArrayType(s: StructType, _) if s.isEmpty => noFields(column)
          case s: StructType => walk(s, name + separator, column + ".", structs :+ Step(i, s))
          case ArrayType(e: StructType, _) => inElement(e, name, column, structs, i, e, Nil)
          case t if isEncodedTensor(f) =>
            if (structs.nonEmpty || sequence) {
              throw TFRecordError.argument(TFRecordError.UnsupportedType,
                s"Column '$column' holds an encoded tensor ($TensorEncodingKey), which is " +
                  "supported only as a top-level column of an Example.", "column" -> column)
            }
            EncodedTensor.check(f.metadata, t, column)
            val leaf = Leaf(name, column, t, t, structs, i, null, Nil, -1, tensor = f.metadata)
            if (splitRagged) {
              tensorNames(name, separator).zip(Seq(TensorValue, TensorShape)).foreach {
                case (n, part) => out += leaf.copy(name = n, tensorPart = part)
              }
            } else out += leaf
          case t if sparseVectors && TypeTable.isVector(t) =>
            VectorParts.foreach { case (part, suffix) =>
              out += Leaf(name + separator + suffix, column, t, t, structs, i, null, Nil, -1,
                vectorPart = part)
            }
          case t => add(Leaf(name, column, t, t, structs, i, null, Nil, -1, listLength(f)))
        }
      }

    def add(leaf: Leaf): Unit =
      if (splitRagged && isRagged(leaf.dataType, recordType)) {
        raggedNames(leaf.name, separator, TypeTable.depth(leaf.dataType)).zipWithIndex.foreach {
          case (n, level) => out += leaf.copy(name = n, raggedLevel = level)
        }
      } else out += leaf

    def noFields(column: String): Nothing = throw TFRecordError.argument(
      TFRecordError.InvalidSchema,
      s"Column '$column' is a struct with no fields, which has no feature to be written as.",
      "column" -> column)
    walk(schema, "", "", Nil)
    val all = out.result()
    all.groupBy(_.name).values.find(_.size > 1).foreach { same =>
      throw TFRecordError.argument(TFRecordError.InvalidSchema,
        s"Columns ${same.map(l => s"'${l.column}'").mkString(" and ")} would both be the " +
          s"feature '${same.head.name}'. Rename one, or choose another pathSeparator.")
    }
    all
  }

  /** The flat schema of the features: one column per leaf, named by its feature name. */
  def flatSchema(leaves: Seq[Leaf]): StructType =
    StructType(leaves.map(l => StructField(l.name, l.dataType, nullable = true, l.tensor)))
}
