package io.github.sparktfrecord

import java.util.zip.{Deflater, Inflater}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.{ExampleDeserializer, ExampleSerializer, FeaturePaths}
import io.github.sparktfrecord.codec.{RecordType, TFRecordSchema}
import io.github.sparktfrecord.framing.TFRecordFraming

/**
 * Encoded TFDS tensors (`Tensor(shape=(None, None), encoding='bytes' | 'zlib')`): the bytes
 * written (`x/value`: raw little-endian values in C order, zlib-deflated or not, and `x/shape`),
 * read back exactly, and every malformed record failing with its column, file and offset.
 */
class EncodedTensorSuite extends UnitSuite {
  import ProtoBytes._

  private final val Offset = 1000L

  private def tensorSchema(dataType: DataType, encoding: String, dtype: String): StructType =
    StructType(Seq(StructField("x", dataType, nullable = true,
      new MetadataBuilder().putString(FeaturePaths.TensorEncodingKey, encoding)
        .putString(FeaturePaths.TensorDtypeKey, dtype).build())))

  private val floats2 = ArrayType(ArrayType(FloatType, false), false)
  private val longs3 = ArrayType(ArrayType(ArrayType(LongType, false), false), false)

  private def array(values: Any*): ArrayData = new GenericArrayData(values.toArray[Any])

  private def serialize(s: StructType, value: Any): Array[Byte] = {
    val serializer = new ExampleSerializer(s, RecordType.Example)
    val n = serializer.serialize(new GenericInternalRow(Array[Any](value)))
    serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
  }

  private def read(s: StructType, record: Array[Byte]): UnsafeRow =
    new ExampleDeserializer(s, RecordType.Example, "test.tfrecord").decode(record, 0,
      record.length, Offset)

  private def record(value: Array[Byte], shape: Long*): Array[Byte] =
    example(entry("x/value", bytesList(field(1, value))),
      entry("x/shape",
        int64List(packedInt64(shape: _*))))

  private def deflate(raw: Array[Byte]): Array[Byte] = {
    val d = new Deflater()
    d.setInput(raw)
    d.finish()
    val out = new Array[Byte](raw.length + 64)
    val n = d.deflate(out)
    d.end()
    out.take(n)
  }

  private def inflate(packed: Array[Byte], size: Int): Array[Byte] = {
    val i = new Inflater()
    i.setInput(packed)
    val out = new Array[Byte](size + 1)
    val n = i.inflate(out)
    assert(i.finished())
    i.end()
    out.take(n)
  }

  private val nan = java.lang.Float.intBitsToFloat(0x7fc00001)
  /** A 2x3 float32 tensor, NaN payload and -0.0 included, and its little-endian bytes. */
  private val floatRows = Seq(Seq(1.5f, -0.0f, nan),
    Seq(Float.MaxValue, Float.MinPositiveValue,
      -2f))
  private val floatBytes = cat(floatRows.flatten.map(f =>
    le32(java.lang.Float.floatToRawIntBits(f))): _*)
  /** A 2x1x3 int64 tensor and its bytes. */
  private val longRows = Seq(Seq(Seq(Long.MinValue, -1L, 0L)), Seq(Seq(1L, 2L, Long.MaxValue)))
  private val longBytes = cat(longRows.flatten.flatten.map(le64): _*)

  private def floatValue: ArrayData = array(floatRows.map(r => array(r: _*)): _*)
  private def longValue: ArrayData =
    array(longRows.map(p => array(p.map(r => array(r: _*)): _*)): _*)

  test("encoding 'bytes': x/value holds the raw little-endian values, x/shape the sizes") {
    assertEquals(toHex(serialize(tensorSchema(floats2, "bytes", "float32"), floatValue)),
      toHex(record(floatBytes, 2L, 3L)))
    assertEquals(toHex(serialize(tensorSchema(longs3, "bytes", "int64"), longValue)),
      toHex(record(longBytes, 2L, 1L, 3L)))
  }

  test("encoding 'zlib': x/value inflates to the raw values") {
    for ((s, v, raw, shape) <- Seq(
        (tensorSchema(floats2, "zlib", "float32"), floatValue, floatBytes, Seq(2L, 3L)),
        (tensorSchema(longs3, "zlib", "int64"), longValue, longBytes, Seq(2L, 1L, 3L)))) {
      val written = serialize(s, v)
      val packed = deflate(raw)
      // The Deflater's default level is zlib's, as Python's zlib.compress uses.
      assertEquals(toHex(written), toHex(record(packed, shape: _*)))
      assertEquals(toHex(inflate(packed, raw.length)), toHex(raw))
    }
  }

  test("both encodings read back value for value, bits included") {
    for (encoding <- Seq("bytes", "zlib")) {
      val fs = tensorSchema(floats2, encoding, "float32")
      val row = read(fs, serialize(fs, floatValue))
      val got = (0 until 2).map(i => row.getArray(0).getArray(i).toFloatArray.toSeq)
      assertEquals(got.map(_.map(java.lang.Float.floatToRawIntBits)),
        floatRows.map(_.map(java.lang.Float.floatToRawIntBits)))
      val ls = tensorSchema(longs3, encoding, "int64")
      val lrow = read(ls, serialize(ls, longValue))
      val lgot = (0 until 2).map(i =>
        (0 until 1).map(j => lrow.getArray(0).getArray(i).getArray(j).toLongArray.toSeq))
      assertEquals(lgot, longRows)
    }
  }

  test("empty dimensions, small dtypes, and a record without the features (null)") {
    val s = tensorSchema(floats2, "zlib", "float32")
    val empty = read(s, record(deflate(Array.emptyByteArray), 0L, 3L))
    assertEquals(empty.getArray(0).numElements(), 0)
    val rows = read(s, record(deflate(Array.emptyByteArray), 2L, 0L))
    assertEquals((0 until 2).map(i => rows.getArray(0).getArray(i).numElements()), Seq(0, 0))
    assert(read(s, example()).isNullAt(0))
    val u8 = tensorSchema(ArrayType(ArrayType(ShortType, false), false), "bytes", "uint8")
    val b = read(u8, record(Array[Byte](-1, 0, 7, -128), 2L, 2L))
    assertEquals((0 until 2).map(i => b.getArray(0).getArray(i).toShortArray.toSeq),
      Seq(Seq[Short](255, 0), Seq[Short](7, 128)))
    val bools = tensorSchema(ArrayType(ArrayType(BooleanType, false), false), "bytes", "bool")
    val t = read(bools, record(Array[Byte](1, 0), 1L, 2L))
    assertEquals(t.getArray(0).getArray(0).toBooleanArray.toSeq, Seq(true, false))
  }

  private def failure(s: StructType, record: Array[Byte]): String = {
    val e = intercept[TFRecordDataException](read(s, record))
    assertEquals(e.path, "test.tfrecord")
    assertEquals(e.offset, Offset)
    assertEquals(e.column, "x")
    e.text
  }

  test("malformed records fail naming the column, the file and the offset") {
    val s = tensorSchema(floats2, "zlib", "float32")
    val b = tensorSchema(floats2, "bytes", "float32")
    def has(text: String, part: String): Unit =
      assert(text.contains(part), s"'$part' not in: $text")
    has(failure(b, record(floatBytes, 3L, 3L)),
      "Column 'x' (array<array<float>>) has 24 bytes of values in 'x/value', but its shape " +
        "(3, 3) of 4-byte values takes 36")
    has(failure(s, record(deflate(floatBytes), 2L, 2L)),
      "has more bytes of values in 'x/value', but its shape (2, 2) of 4-byte values takes 16")
    has(failure(s, record(deflate(floatBytes), 2L, 4L)),
      "has 24 bytes of values in 'x/value', but its shape (2, 4)")
    has(failure(s, record(floatBytes, 2L, 3L)), "has a bad zlib stream in 'x/value'")
    has(failure(s, record(deflate(floatBytes).dropRight(6), 2L, 3L)),
      "has a truncated zlib stream in 'x/value'")
    has(failure(s, record(floatBytes, 6L)),
      "has a shape of 1 sizes in 'x/shape', but its rank is 2")
    has(failure(b, record(Array.emptyByteArray, -1L, 0L)), "has the size -1 in 'x/shape'")
    // No value, but 2^31 - 1 empty lists: more than a row holds, refused before any is written.
    has(failure(b, record(Array.emptyByteArray, Int.MaxValue.toLong, 0L)),
      "has the shape (2147483647, 0) in 'x/shape', whose lists do not fit in a Spark row")
    val deep = tensorSchema(ArrayType(ArrayType(floats2)), "bytes", "float32")
    has(failure(deep, record(Array.emptyByteArray, 70000L, 70000L, 0L, 0L)),
      "has the shape (70000, 70000, 0, 0) in 'x/shape', whose lists do not fit")
    has(failure(b, example(entry("x/value", bytesList(field(1, floatBytes))))),
      "is read from the features 'x/value' and 'x/shape', but the record has no 'x/shape'")
    has(failure(b,
      example(entry("x/shape", int64List(packedInt64(2L, 3L))),
        entry("x/value", floatList(packedFloat(1f))))),
      "cannot be read from its float_list feature 'x/value': it holds one bytes value")
    has(failure(b,
      example(entry("x/shape", int64List(packedInt64(0L, 0L))),
        entry("x/value", bytesList(field(1), field(1))))),
      "has 2 values in 'x/value', which holds one bytes value")
  }

  test("a value that is not rectangular, or holds a null, fails naming the column") {
    val s = tensorSchema(floats2, "bytes", "float32")
    val ragged = intercept[TFRecordDataException](serialize(s, array(array(1f, 2f), array(3f))))
    assertEquals(ragged.column, "x")
    assert(ragged.text.contains("Column 'x' holds an encoded tensor of rank 2 that is not " +
        "rectangular: its arrays at depth 2 hold 2 and 1 values in a row"), ragged.text)
    val nul = intercept[TFRecordDataException](serialize(s, array(array(1f), null)))
    assert(nul.text.contains("holds a null at depth 1"), nul.text)
  }

  test("a column of no array with an encoded tensor's metadata is refused on read and write") {
    // TFDS stores Tensor(shape=(), encoding=...) as one bytes value under its own name, never as
    // x/value and x/shape: refused when the read or write is planned, and by the codec itself.
    for ((t, dtype, encoding) <- Seq((FloatType, "float32", "zlib"), (LongType, "int64", "bytes"),
        (ShortType, "uint8", "zlib"))) {
      val s = tensorSchema(t, encoding, dtype)
      val refusals = Seq(
        "validate (read)" -> (() => TFRecordSchema.validate(s, RecordType.Example, false)),
        "validate (write)" -> (() => TFRecordSchema.validate(s, RecordType.Example, true)),
        "deserializer" -> (() => read(s, example(entry("x/value", bytesList(field(1, le32(1))))))),
        "serializer" -> (() => serialize(s, 1)))
      for ((where, refused) <- refusals) {
        val e = intercept[TFRecordArgumentException](refused())
        val reason = s"Column 'x' holds an encoded tensor (tfrecord.tensorEncoding) but has " +
          s"type ${t.simpleString}: an encoded tensor column must be an array of rank 1 or " +
          "more (one array per dimension)."
        assertEquals(e.condition, TFRecordError.InvalidSchema, where)
        assertEquals(e.parameters, Map("column" -> "x", "reason" -> reason), where)
        assertEquals(e.text, reason, where)
      }
    }
    // The rank is checked before the dtype, as validate (the leaves) comes before the codec.
    val both = intercept[TFRecordArgumentException](
      read(tensorSchema(DoubleType, "bytes", "complex64"), example()))
    assert(both.text.contains("must be an array of rank 1 or more"), both.text)
  }

  test(
    "an encoding, a dtype or an element type a tensor cannot have is refused on read and write") {
    // Before, an encoding such as 'gzip' was read as 'bytes', a float32 tensor of bigint arrays
    // gave each float's bits as a number, and a missing dtype failed with no condition.
    val longs2 = ArrayType(ArrayType(LongType, false), false)
    val noDtype = StructType(Seq(StructField("x", floats2, nullable = true,
      new MetadataBuilder().putString(FeaturePaths.TensorEncodingKey, "bytes").build())))
    val numericEncoding = StructType(Seq(StructField("x", floats2, nullable = true,
      new MetadataBuilder().putLong(FeaturePaths.TensorEncodingKey, 1L)
        .putString(FeaturePaths.TensorDtypeKey, "float32").build())))
    val dtypes = "bool, float32, float64, int16, int32, int64, int8, uint8"
    val cases = Seq[(StructType, String)](
      tensorSchema(floats2, "gzip", "float32") ->
        ("holds an encoded tensor of encoding 'gzip' (tfrecord.tensorEncoding), which is not " +
          "one of bytes, zlib."),
      numericEncoding -> "holds an encoded tensor of encoding '' (tfrecord.tensorEncoding)",
      tensorSchema(floats2, "bytes", "float16") ->
        ("holds an encoded tensor of dtype 'float16' (tfrecord.tensorDtype), which is not one " +
          s"of $dtypes."),
      noDtype -> "holds an encoded tensor of dtype '' (tfrecord.tensorDtype), which is not",
      tensorSchema(longs2, "bytes", "float32") ->
        ("holds an encoded tensor of dtype 'float32' (tfrecord.tensorDtype), whose values are " +
          "float, but has type array<array<bigint>>."),
      tensorSchema(ArrayType(ByteType, false), "zlib", "uint8") ->
        ("holds an encoded tensor of dtype 'uint8' (tfrecord.tensorDtype), whose values are " +
          "smallint, but has type array<tinyint>."))
    for ((s, words) <- cases) {
      val refusals = Seq(
        "validate (read)" -> (() => TFRecordSchema.validate(s, RecordType.Example, false)),
        "validate (write)" -> (() => TFRecordSchema.validate(s, RecordType.Example, true)),
        "deserializer" -> (() => read(s, record(le32(1), 1L, 1L))),
        "serializer" -> (() => serialize(s, array(array(1f)))))
      for ((where, refused) <- refusals) {
        val e = intercept[TFRecordArgumentException](refused())
        assertEquals(e.condition, TFRecordError.InvalidSchema, where)
        assertEquals(e.parameters("column"), "x", where)
        assert(e.text.startsWith("Column 'x' " + words), s"$where: ${e.text}")
      }
    }
  }
}
