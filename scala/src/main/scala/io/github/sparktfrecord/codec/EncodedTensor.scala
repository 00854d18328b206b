package io.github.sparktfrecord.codec

import scala.util.Try

import org.apache.spark.sql.types._

import io.github.sparktfrecord.TFRecordError

/**
 * The element types of an encoded TFDS tensor column ([[FeaturePaths.TensorEncodingKey]]): per
 * numpy dtype, the Spark type of its values and the bytes each takes in the stored value. An
 * uint8 is read as a short (a byte would not hold 128 to 255).
 */
private[sparktfrecord] object EncodedTensor {
  final val Float32 = 0
  final val Float64 = 1
  final val Int8 = 2
  final val Int16 = 3
  final val Int32 = 4
  final val Int64 = 5
  final val UInt8 = 6
  final val Bool = 7

  /** Per dtype: its code (above), Spark element type and item size in bytes. */
  final case class Element(code: Int, dataType: DataType, itemSize: Int)

  val Elements: Map[String, Element] = Map(
    "float32" -> Element(Float32, FloatType, 4),
    "float64" -> Element(Float64, DoubleType, 8),
    "int8" -> Element(Int8, ByteType, 1),
    "int16" -> Element(Int16, ShortType, 2),
    "int32" -> Element(Int32, IntegerType, 4),
    "int64" -> Element(Int64, LongType, 8),
    "uint8" -> Element(UInt8, ShortType, 1),
    "bool" -> Element(Bool, BooleanType, 1))

  /** The encodings TFDS stores such a tensor with. */
  val Encodings: Set[String] = Set("bytes", "zlib")

  /** The `array<…<T>>` of `rank` nested arrays a tensor of `dtype` is read as. */
  def sparkType(dtype: String, rank: Int): DataType = {
    var t: DataType = Elements(dtype).dataType
    (1 to rank).foreach(_ => t = ArrayType(t, containsNull = false))
    t
  }

  /** The encoding of a column that [[check]] passed. */
  def encoding(metadata: Metadata): String = metadata.getString(FeaturePaths.TensorEncodingKey)

  /**
   * Checks an encoded tensor column of `dataType` with the field `metadata` when a read or write
   * is planned, before any record, and returns its rank: a column of no array (a scalar, a
   * vector) fails, as `x/value` and `x/shape` are TFDS's layout of a tensor with more than one
   * unknown dimension, never of a scalar (TFDS stores a tensor with fewer as one bytes value
   * under its own name); so do an encoding other than [[Encodings]]', a dtype other than
   * [[Elements]]' (absent, or not a string: '') and an innermost type other than the dtype's,
   * which the codec would read the values' bytes as.
   */
  def check(metadata: Metadata, dataType: DataType, column: String): Int = {
    val rank = TypeTable.depth(dataType)
    if (rank < 1) {
      refuse(column,
        s"Column '$column' holds an encoded tensor (${FeaturePaths.TensorEncodingKey}) but " +
          s"has type ${dataType.simpleString}: an encoded tensor column must be an array of " +
          "rank 1 or more (one array per dimension).")
    }
    val encoding = text(metadata, FeaturePaths.TensorEncodingKey)
    if (!Encodings(encoding)) {
      refuse(column,
        s"Column '$column' holds an encoded tensor of encoding '$encoding' " +
          s"(${FeaturePaths.TensorEncodingKey}), which is not one of " +
          Encodings.toSeq.sorted.mkString(", ") + ".")
    }
    val dtype = text(metadata, FeaturePaths.TensorDtypeKey)
    val values = Elements.getOrElse(dtype,
      refuse(column,
        s"Column '$column' holds an encoded tensor of dtype '$dtype' " +
          s"(${FeaturePaths.TensorDtypeKey}), which is not one of " +
          Elements.keys.toSeq.sorted.mkString(", ") + ".")).dataType
    if (TypeTable.innermost(dataType) != values) {
      refuse(column,
        s"Column '$column' holds an encoded tensor of dtype '$dtype' " +
          s"(${FeaturePaths.TensorDtypeKey}), whose values are ${values.simpleString}, but has " +
          s"type ${dataType.simpleString}.")
    }
    rank
  }

  /** The element of a column that [[check]] passed. */
  def element(metadata: Metadata): Element =
    Elements(metadata.getString(FeaturePaths.TensorDtypeKey))

  /** A string value of `key` in `metadata`; "" for none, or a value of another type. */
  private def text(metadata: Metadata, key: String): String =
    if (metadata.contains(key)) Try(metadata.getString(key)).getOrElse("") else ""

  private def refuse(column: String, reason: String): Nothing =
    throw TFRecordError.argument(TFRecordError.InvalidSchema, reason, "column" -> column)
}
