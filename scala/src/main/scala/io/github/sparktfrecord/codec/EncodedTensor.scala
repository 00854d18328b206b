package io.github.sparktfrecord.codec

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

  /** The tensor's encoding and element of a column's metadata. */
  def encoding(metadata: Metadata): String = metadata.getString(FeaturePaths.TensorEncodingKey)

  /**
   * The rank of an encoded tensor column of `dataType`: its nested arrays. A column of no array
   * (a scalar, a vector) fails: `x/value` and `x/shape` are TFDS's layout of a tensor with more
   * than one unknown dimension, never of a scalar (TFDS stores a tensor with fewer as one bytes
   * value under its own name). Called when a read or write is planned, before any record.
   */
  def rank(dataType: DataType, column: String): Int = {
    val rank = TypeTable.depth(dataType)
    if (rank < 1) {
      throw TFRecordError.argument(TFRecordError.InvalidSchema,
        s"Column '$column' holds an encoded tensor (${FeaturePaths.TensorEncodingKey}) but " +
          s"has type ${dataType.simpleString}: an encoded tensor column must be an array of " +
          "rank 1 or more (one array per dimension).", "column" -> column)
    }
    rank
  }

  def element(metadata: Metadata, column: String): Element = {
    val dtype = metadata.getString(FeaturePaths.TensorDtypeKey)
    Elements.getOrElse(dtype,
      throw TFRecordError.argument(TFRecordError.InvalidSchema,
        s"Column '$column' holds an encoded tensor of dtype '$dtype' " +
          s"(${FeaturePaths.TensorDtypeKey}), which is not one of " +
          Elements.keys.toSeq.sorted.mkString(", ") + ".", "column" -> column))
  }
}
