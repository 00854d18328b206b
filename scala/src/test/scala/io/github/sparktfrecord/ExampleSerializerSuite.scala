package io.github.sparktfrecord

import java.math.{BigDecimal => JBigDecimal}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, SpecializedGetters}
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import ErrorText._

import io.github.sparktfrecord.codec.{ByteArraySerializer, ColumnWriter, FeatureEncoder}
import io.github.sparktfrecord.codec.{FeatureListEncoder, RecordSerializer, RecordType}
import io.github.sparktfrecord.codec.{ExampleDeserializer, ExampleSerializer, FloatText}
import io.github.sparktfrecord.framing.TFRecordFraming
import io.github.sparktfrecord.wire.{FeatureRun, FeatureValueReader, WireCursor}

/**
 * Rows into the bytes TensorFlow writes for the same Example, and back through the
 * deserializer; the measure / write contract of the encoders and the begin / end one of the
 * decoders.
 */
class ExampleSerializerSuite extends UnitSuite {
  import ProtoBytes._

  private def schema(fields: (String, DataType)*): StructType =
    StructType(fields.map { case (n, t) => StructField(n, t) })

  private def serialize(
      s: StructType,
      row: InternalRow,
      recordType: RecordType = RecordType.Example): Array[Byte] = {
    val serializer = new ExampleSerializer(s, recordType)
    val n = serializer.serialize(row)
    serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
  }

  private def array(values: Any*): ArrayData = new GenericArrayData(values.toArray[Any])
  private def str(s: String): UTF8String = UTF8String.fromString(s)

  test("the bytes TensorFlow writes for the same Example") {
    // Each expected value is TensorFlow 2.21's SerializeToString() of that Example.
    val int1 = "0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01"
    for (t <- Seq(LongType, IntegerType, ShortType, ByteType, DateType, TimestampType,
        TimestampNTZType)) {
      val one: Any = t match {
        case IntegerType | DateType => 1
        case ShortType => 1.toShort
        case ByteType => 1.toByte
        case _ => 1L
      }
      assertEquals(toHex(serialize(schema("a" -> t), InternalRow(one))), int1, t.simpleString)
    }
    assertEquals(toHex(serialize(schema("a" -> BooleanType), InternalRow(true))), int1)
    assertEquals(toHex(serialize(schema("a" -> ArrayType(LongType)),
        InternalRow(array(-1L,
          300L)))), "0a 17 0a 15 0a 01 61 12 10 1a 0e 0a 0c ff ff ff ff ff ff ff ff ff 01 ac 02")
    val float1 = "0a 0f 0a 0d 0a 01 61 12 08 12 06 0a 04 00 00 80 3f"
    assertEquals(toHex(serialize(schema("a" -> FloatType), InternalRow(1.0f))), float1)
    assertEquals(toHex(serialize(schema("a" -> DoubleType), InternalRow(1.0))), float1)
    assertEquals(toHex(serialize(schema("a" -> DecimalType(5, 2)),
        InternalRow(Decimal(new JBigDecimal("1.00"), 5, 2)))), float1)
    assertEquals(toHex(serialize(schema("f" -> ArrayType(FloatType)),
        InternalRow(array(1.5f,
          -2.0f)))), "0a 13 0a 11 0a 01 66 12 0c 12 0a 0a 08 00 00 c0 3f 00 00 00 c0")
    val hi = "0a 0d 0a 0b 0a 01 73 12 06 0a 04 0a 02 68 69"
    assertEquals(toHex(serialize(schema("s" -> StringType), InternalRow(str("hi")))), hi)
    assertEquals(toHex(serialize(schema("s" -> BinaryType), InternalRow(utf8("hi")))), hi)
    assertEquals(toHex(serialize(schema("s" -> ArrayType(StringType)),
        InternalRow(array(
          str("hi"), str(""))))), "0a 0f 0a 0d 0a 01 73 12 08 0a 06 0a 02 68 69 0a 00")
    assertEquals(toHex(serialize(schema("s" -> ArrayType(BinaryType)),
        InternalRow(array(
          utf8("hi"), utf8(""))))), "0a 0f 0a 0d 0a 01 73 12 08 0a 06 0a 02 68 69 0a 00")
    // An empty list is a Feature of that kind with no values; a null column is no feature.
    assertEquals(toHex(serialize(schema("a" -> ArrayType(LongType)), InternalRow(array()))),
      "0a 09 0a 07 0a 01 61 12 02 1a 00")
    assertEquals(toHex(serialize(schema("a" -> LongType), InternalRow(null))), "0a 00")
  }

  test("several features: map entries in schema order") {
    // Protobuf leaves the order of map entries open; this serializer follows the schema.
    val bytes = serialize(schema("a" -> LongType, "n" -> StringType, "s" -> StringType),
      InternalRow(1L, null, str("hi")))
    assertEquals(toHex(bytes),
      "0a 19 0a 0a 0a 01 61 12 05 1a 03 0a 01 01 0a 0b 0a 01 73 12 06 0a 04 0a 02 68 69")
    assertEquals(toHex(bytes),
      toHex(example(entry("a", int64List(packedInt64(1L))),
        entry("s", bytesList(bytesValues("hi"))))))
  }

  test("SequenceExample: the bytes TensorFlow writes, with and without a context") {
    val s = schema("c" -> FloatType, "t" -> ArrayType(ArrayType(LongType)))
    val steps = array(array(1L, 2L), array())
    assertEquals(toHex(serialize(s, InternalRow(0.5f, steps), RecordType.SequenceExample)),
      "0a 0f 0a 0d 0a 01 63 12 08 12 06 0a 04 00 00 00 3f 12 13 0a 11 0a 01 74 12 0c 0a 06 1a " +
        "04 0a 02 01 02 0a 02 1a 00")
    assertEquals(toHex(serialize(s, InternalRow(null, steps), RecordType.SequenceExample)),
      "12 13 0a 11 0a 01 74 12 0c 0a 06 1a 04 0a 02 01 02 0a 02 1a 00")
    assertEquals(serialize(s, InternalRow(null, null), RecordType.SequenceExample).length, 0)
    // A list of no steps is still a feature list.
    assertEquals(toHex(serialize(s, InternalRow(null, array()), RecordType.SequenceExample)),
      "12 07 0a 05 0a 01 74 12 00")
  }

  test("ByteArray: the binary column is the record") {
    val serializer = new ByteArraySerializer("byteArray")
    val bytes = Array.tabulate[Byte](300)(_.toByte)
    assertEquals(serializer.serialize(InternalRow(bytes)), 300)
    assertEquals(serializer.buffer.slice(12, 312).toSeq, bytes.toSeq)
    val e = intercept[TFRecordDataException](serializer.serialize(InternalRow(null)))
    assertEquals((e.condition, e.column), (TFRecordError.DataMismatch, "byteArray"))
    assertEquals(e.text,
      "Column 'byteArray' is null in a row: recordType ByteArray " +
        "writes each value as one record and has nothing to write for a null. Filter the nulls " +
        "out first.")
  }

  test("a null inside an array fails naming the column and the index") {
    val message = "Column 'a' holds an array with a null element at index 1: TFRecord feature " +
      "lists cannot hold nulls. Drop or fill them first (for example with " +
      "filter(x -> x IS NOT NULL) or coalesce)."
    for (t <- Seq(LongType, FloatType, StringType)) {
      val e = intercept[TFRecordDataException](
        serialize(schema("a" -> ArrayType(t)), InternalRow(array(null, null))))
      assertEquals(e.getMessageParameters.get("column"), "a")
      assertEquals(e.text, message.replace("index 1", "index 0"), t.simpleString)
    }
    val nested = intercept[TFRecordDataException](serialize(
      schema("a" -> ArrayType(ArrayType(LongType))), InternalRow(array(array(1L), null)),
      RecordType.SequenceExample))
    assertEquals(nested.text, message)
  }

  /** `name`'s ragged_row_lengths_0 as written: packed, or an empty list. */
  private def rl(name: String, lengths: Long*): Array[Byte] =
    entry(name + "/ragged_row_lengths_0",
      if (lengths.isEmpty) int64List() else int64List(packedInt64(lengths: _*)))

  test("Example: a list of lists is written ragged, as TensorFlow Datasets writes it") {
    val longs = schema("x" -> ArrayType(ArrayType(LongType)))
    // [[1, 2], [], [-1]]: the inner lists' lengths, then every value in order.
    assertEquals(toHex(serialize(longs, InternalRow(array(array(1L, 2L), array(), array(-1L))))),
      toHex(example(entry("x/ragged_row_lengths_0", int64List(packedInt64(2L, 0L, 1L))),
        entry("x/ragged_flat_values", int64List(packedInt64(1L, 2L, -1L))))))
    // An empty outer list: both features, empty; a null column: neither.
    assertEquals(toHex(serialize(longs, InternalRow(array()))),
      toHex(example(entry("x/ragged_row_lengths_0", int64List()),
        entry("x/ragged_flat_values", int64List()))))
    assertEquals(toHex(serialize(longs, InternalRow(null))), toHex(example()))
    // Depth 3, [[[0.5], []], [], [[-0.0, 2.5]]]: level 0 the lengths of the lists of lists,
    // level 1 those of the innermost lists.
    val floats = schema("x" -> ArrayType(ArrayType(ArrayType(FloatType))))
    assertEquals(toHex(serialize(floats,
        InternalRow(array(array(array(0.5f), array()), array(), array(array(-0.0f, 2.5f)))))),
      toHex(example(entry("x/ragged_row_lengths_0", int64List(packedInt64(2L, 0L, 1L))),
        entry("x/ragged_row_lengths_1", int64List(packedInt64(1L, 0L, 2L))),
        entry("x/ragged_flat_values", floatList(packedFloat(0.5f, -0.0f, 2.5f))))))
    // Strings and binaries as a bytes_list; doubles rounded to float.
    for (t <- Seq(StringType, BinaryType)) {
      def v(x: String): Any = if (t == StringType) str(x) else utf8(x)
      assertEquals(toHex(serialize(schema("s" -> ArrayType(ArrayType(t))),
          InternalRow(array(array(), array(v("hi"), v("")))))),
        toHex(example(rl("s", 0L, 2L),
          entry("s/ragged_flat_values",
            bytesList(bytesValues("hi", ""))))), t.simpleString)
    }
    assertEquals(toHex(serialize(schema("d" -> ArrayType(ArrayType(DoubleType))),
        InternalRow(array(array(1.0, 0.1))))),
      toHex(example(rl("d", 2L),
        entry("d/ragged_flat_values", floatList(packedFloat(1.0f, 0.1f))))))
  }

  test("Example: a struct's list of lists and an array of structs' lists, ragged per leaf") {
    val struct = StructType.fromDDL("s struct<a array<array<int>>, b bigint>")
    assertEquals(toHex(serialize(struct, InternalRow(InternalRow(array(array(7), array()), 3L)))),
      toHex(example(rl("s/a", 1L, 0L),
        entry("s/a/ragged_flat_values", int64List(packedInt64(7L))),
        entry("s/b", int64List(packedInt64(3L))))))
    // One list per element: its leaf's lengths are one per element, the scalar leaf parallel.
    val tokens = StructType.fromDDL("x array<struct<id bigint, tokens array<string>>>")
    assertEquals(toHex(serialize(tokens,
        InternalRow(array(InternalRow(1L, array(str("a"), str("b"))), InternalRow(2L, array()),
          InternalRow(3L, array(str("c"))))))),
      toHex(example(entry("x/id", int64List(packedInt64(1L, 2L, 3L))),
        rl("x/tokens", 2L, 0L, 1L),
        entry("x/tokens/ragged_flat_values", bytesList(bytesValues("a", "b", "c"))))))
    // A list of lists in each element: two levels of lengths.
    val deep = StructType.fromDDL("x array<struct<m array<array<float>>>>")
    assertEquals(toHex(serialize(deep,
        InternalRow(array(InternalRow(array(array(1f), array())), InternalRow(array()))))),
      toHex(example(rl("x/m", 2L, 0L),
        entry("x/m/ragged_row_lengths_1", int64List(packedInt64(1L, 0L))),
        entry("x/m/ragged_flat_values", floatList(packedFloat(1f))))))
    // An empty array of structs: every leaf's features, empty.
    assertEquals(toHex(serialize(tokens, InternalRow(array()))),
      toHex(example(entry("x/id", int64List()), rl("x/tokens"),
        entry("x/tokens/ragged_flat_values", bytesList()))))
  }

  test("a null list or value inside a list of lists fails naming the column and where") {
    def fails(s: StructType, row: InternalRow): TFRecordDataException =
      intercept[TFRecordDataException](serialize(s, row))
    val rest = " of its lists of lists in a row: the ragged layout (ragged_flat_values and " +
      "ragged_row_lengths) has no place for a null. Drop or fill the nulls first."
    val longs = schema("x" -> ArrayType(ArrayType(LongType)))
    val list = fails(longs, InternalRow(array(array(1L), null)))
    assertEquals(list.text, "Column 'x' holds a null list at [1]" + rest)
    assertEquals(list.getMessageParameters.get("column"), "x")
    assertEquals(fails(longs, InternalRow(array(array(), array(1L, null)))).text,
      "Column 'x' holds a null value at [1][1]" + rest)
    val strings = schema("x" -> ArrayType(ArrayType(ArrayType(StringType))))
    assertEquals(fails(strings, InternalRow(array(array(array(), null)))).text,
      "Column 'x' holds a null list at [0][1]" + rest)
    assertEquals(fails(strings, InternalRow(array(array(), array(array(str("a"), null))))).text,
      "Column 'x' holds a null value at [1][0][1]" + rest)
    val tokens = StructType.fromDDL("x array<struct<tokens array<string>>>")
    assertEquals(fails(tokens,
      InternalRow(array(InternalRow(array()),
        InternalRow(array(null))))).text,
      "Column 'x.tokens' holds a null value at [1][0]" + rest)
    assert(fails(tokens, InternalRow(array(InternalRow(null)))).text.startsWith(
      "Column 'x.tokens': element 0 of its array of structs holds a null for this field."))
  }

  /** An array that claims `n` elements, each `value`, without holding them. */
  private final class Repeated(n: Int, value: Long) extends GenericArrayData(Array.empty[Any]) {
    override def numElements(): Int = n
    override def isNullAt(i: Int): Boolean = false
    override def getLong(i: Int): Long = value
  }

  /** A string that claims `n` bytes, to be measured only: its bytes are never read. */
  private def claimed(n: Int): UTF8String =
    UTF8String.fromAddress(Array.emptyByteArray, Platform.BYTE_ARRAY_OFFSET, n)

  private def tooLarge(s: StructType, row: InternalRow, recordType: RecordType): String =
    intercept[TFRecordDataException](
      new ExampleSerializer(s, recordType).serialize(row)).text

  private val atMost = s"at most ${Int.MaxValue - 64 - 16} fit in one record"

  /** The size of a length-delimited field of `n` bytes, by the definition. */
  private def delimited(n: Long): Long = 1 + varint(n).length + n

  test("an int64 list too large for a record fails naming its column; its size does not wrap") {
    // 429,496,730 ten-byte varints: 4,294,967,300 bytes, which an Int sum would wrap to 4.
    val n = 429496730
    val list = 10L * n
    val feature = delimited(delimited(list))
    assertEquals(tooLarge(schema("ids" -> ArrayType(LongType)), InternalRow(new Repeated(n, -1L)),
      RecordType.Example), s"Column 'ids' too large for one TFRecord: $feature bytes, $atMost")
  }

  test("a value, a feature list or a row too large for a record fails, naming the column") {
    val max = Int.MaxValue - 64 - 16
    // A string of Int.MaxValue bytes: its BytesList alone is larger than a record can hold.
    val huge = delimited(delimited(Int.MaxValue))
    assertEquals(tooLarge(schema("s" -> StringType), InternalRow(claimed(Int.MaxValue)),
      RecordType.Example), s"Column 's' too large for one TFRecord: $huge bytes, $atMost")
    // Steps that each fit, and together do not.
    val step = delimited(delimited(1 << 30))
    assertEquals(tooLarge(schema("t" -> ArrayType(ArrayType(StringType))),
      InternalRow(array(array(claimed(1 << 30)), array(claimed(1 << 30)))),
      RecordType.SequenceExample),
      s"Column 't' too large for one TFRecord: ${2 * delimited(step)} bytes, $atMost")
    // Two columns that each fit, and together do not.
    val half = max / 2 + 16
    val feature = delimited(delimited(half))
    val entry = delimited(delimited(1) + delimited(feature)) // key "a" or "b", the Feature
    assertEquals(tooLarge(schema("a" -> StringType, "b" -> StringType),
      InternalRow(claimed(half), claimed(half)), RecordType.Example),
      s"Row too large for one TFRecord: ${delimited(2 * entry)} bytes, $atMost")
    assertEquals(RecordSerializer.checkedSize(max.toLong, "c"), max)
    assertEquals(intercept[TFRecordDataException](RecordSerializer.checkedSize(max + 1L, "c"))
        .text, s"Column 'c' too large for one TFRecord: ${max + 1L} bytes, $atMost")
  }

  /** Every column type, its values as they read back: double and decimal pass through float. */
  private val allTypes = schema(
    "bool" -> BooleanType, "byte" -> ByteType, "short" -> ShortType, "int" -> IntegerType,
    "long" -> LongType, "date" -> DateType, "ts" -> TimestampType, "ntz" -> TimestampNTZType,
    "float" -> FloatType, "double" -> DoubleType, "dec" -> DecimalType(10, 2),
    "bigdec" -> DecimalType(38, 18), "str" -> StringType, "bin" -> BinaryType,
    "bools" -> ArrayType(BooleanType), "bytes" -> ArrayType(ByteType),
    "shorts" -> ArrayType(ShortType), "ints" -> ArrayType(IntegerType),
    "longs" -> ArrayType(LongType), "floats" -> ArrayType(FloatType),
    "doubles" -> ArrayType(DoubleType), "decs" -> ArrayType(DecimalType(10, 2)),
    "strs" -> ArrayType(StringType), "bins" -> ArrayType(BinaryType))

  /** A value as compared: Scala collections, strings, and floats by their bits. */
  private def plain(value: Any, t: DataType): Any = (value, t) match {
    case (null, _) => null
    case (a: ArrayData, ArrayType(e, _)) =>
      (0 until a.numElements()).map(i => plain(a.get(i, e), e))
    case (b: Array[Byte], _) => b.toSeq
    case (s: UTF8String, _) => s.toString
    case (f: Float, _) => s"float bits ${java.lang.Float.floatToRawIntBits(f)}"
    case (d: Double, _) => s"double bits ${java.lang.Double.doubleToRawLongBits(d)}"
    case (d: Decimal, _) => d.toJavaBigDecimal
    case (v, _) => v
  }

  /** What a value reads back as: float_list holds floats (the stated loss of precision). */
  private def stored(value: Any, t: DataType): Any = (value, t) match {
    case (null, _) => null
    case (a: ArrayData, ArrayType(e, _)) =>
      (0 until a.numElements()).map(i => stored(a.get(i, e), e))
    case (d: Double, _) => plain(d.toFloat.toDouble, t)
    case (d: Decimal, column: DecimalType) =>
      val back = Decimal(new JBigDecimal(FloatText.text(d.toFloat)))
      assert(back.changePrecision(column.precision, column.scale))
      back.toJavaBigDecimal
    case (v, _) => plain(v, t)
  }

  private def values(row: SpecializedGetters, s: StructType): Seq[Any] =
    s.fields.indices.map(i =>
      plain(if (row.isNullAt(i)) null else row.get(i, s(i).dataType),
        s(i).dataType))

  private def dec(v: String, p: Int, s: Int): Decimal = Decimal(new JBigDecimal(v), p, s)

  private val rows: Seq[InternalRow] = Seq(
    InternalRow(true, 7.toByte, 300.toShort, 70000, 1L << 40, 19000, 1700000000123456L, -5L,
      1.5f, 0.1, dec("1.25", 10, 2), dec("0.1", 38, 18), str("h\u00e9llo"), utf8("bin"),
      array(true, false), array(1.toByte, (-1).toByte), array((-300).toShort), array(1, -1),
      array(Long.MinValue, 0L, Long.MaxValue), array(0.25f, Float.NaN, -0.0f),
      array(1e300, -1e-300, Double.NaN), array(dec("-3.50", 10, 2), dec("12345678.91", 10, 2)),
      array(str(""), str("\u6f22" * 100)), array(utf8(""), Array.tabulate[Byte](256)(_.toByte))),
    InternalRow(false, Byte.MinValue, Short.MinValue, Int.MinValue, Long.MinValue, -1, -1L,
      Long.MaxValue, Float.MaxValue, Double.MaxValue, dec("-9999999.99", 10, 2),
      dec("-12345678901234567890.123456789", 38, 18), str(""), Array.emptyByteArray, array(),
      array(), array(), array(), array(), array(), array(), array(), array(), array()),
    new GenericInternalRow(new Array[Any](24)))

  test("rows of every type read back, bit-exact but for double and decimal (through float)") {
    val serializer = new ExampleSerializer(allTypes, RecordType.Example)
    val deserializer = new ExampleDeserializer(allTypes, RecordType.Example, "test.tfrecord")
    for (row <- rows) {
      val n = serializer.serialize(row)
      val record = serializer.buffer.slice(TFRecordFraming.HeaderBytes,
        TFRecordFraming.HeaderBytes + n)
      val back = values(deserializer.decode(record, 0, n, 0L), allTypes)
      val expected = allTypes.fields.indices.map(i =>
        stored(if (row.isNullAt(i)) null else row.get(i, allTypes(i).dataType),
          allTypes(i).dataType))
      for (i <- allTypes.fields.indices) {
        assertEquals(back(i), expected(i), allTypes(i).name)
      }
    }
  }

  test("SequenceExample rows read back: feature lists and context") {
    val s = schema("ctx" -> StringType, "t" -> ArrayType(ArrayType(LongType)),
      "f" -> ArrayType(ArrayType(FloatType)), "w" -> ArrayType(ArrayType(StringType)),
      "ctxs" -> ArrayType(IntegerType))
    val serializer = new ExampleSerializer(s, RecordType.SequenceExample)
    val deserializer = new ExampleDeserializer(s, RecordType.SequenceExample, "test.tfrecord")
    for (row <- Seq(
        InternalRow(str("c"), array(array(1L, -2L), array(), array(Long.MaxValue)),
          array(array(0.5f), array(1f, 2f)), array(array(str("a")), array(str(""), str("b"))),
          array(1, 2)),
        InternalRow(null, array(), array(array()), null, array()),
        InternalRow(null, null, null, null, null))) {
      val n = serializer.serialize(row)
      val record = serializer.buffer.slice(12, 12 + n)
      assertEquals(values(deserializer.decode(record, 0, n, 0L), s), values(row, s))
    }
  }

  test("an encoder writes only the value it measured last, and as many bytes as measured") {
    val encoder = FeatureEncoder("a", LongType)
    val row = InternalRow(5L)
    val buf = new Array[Byte](16)
    val unmeasured = intercept[IllegalStateException](encoder.write(row, 0, 5, buf, 0))
    assertEquals(unmeasured.text, "ValueEncoder.write of value 0 without measure")
    assertEquals(encoder.measure(row, 0), 5)
    intercept[IllegalStateException](encoder.write(InternalRow(5L), 0, 5, buf, 0))
    assertEquals(encoder.write(row, 0, 5, buf, 1), 6)
    assertEquals(toHex(buf.take(7)), "00 1a 03 0a 01 05 00")
    // A measure is good for one write.
    intercept[IllegalStateException](encoder.write(row, 0, 5, buf, 0))
    encoder.measure(row, 0)
    val wrongSize = intercept[IllegalStateException](encoder.write(row, 0, 4, buf, 0))
    assertEquals(wrongSize.text, "ValueEncoder wrote 5 bytes, measured 4")

    val steps = InternalRow(array(array(1L), array(2L, 3L)))
    val lists = new FeatureListEncoder("t", FeatureEncoder("t", ArrayType(LongType)))
    intercept[IllegalStateException](lists.write(steps, 0, 0, buf, 0))
    val size = lists.measure(steps, 0)
    assertEquals(lists.write(steps, 0, size, buf, 0), size)
    assertEquals(toHex(buf.take(size)),
      toHex(ProtoBytes.steps(int64List(packedInt64(1L)),
        int64List(packedInt64(2L, 3L)))))
  }

  test("a decoder fails loudly unless it gets exactly the values begun") {
    val writer = new UnsafeRowWriter(2, 64)
    writer.reset()
    writer.zeroOutNullBytes()
    val list = ColumnWriter(StructField("a", ArrayType(LongType)), 0, writer)
    list.beginArray(2)
    list.int64(1L)
    assertEquals(intercept[IllegalStateException](list.end()).text,
      "Column 'a': 1 values written, 2 begun")
    val scalar = ColumnWriter(StructField("b", LongType), 1, writer)
    scalar.beginScalar()
    assertEquals(intercept[IllegalStateException](scalar.end()).text,
      "Column 'b': 0 values written, 1 begun")
    scalar.int64(4L)
    scalar.end()
    assertEquals(writer.getRow.getLong(1), 4L)
    assertEquals(intercept[IllegalStateException](scalar.bytes(Array[Byte](1), 0, 1))
        .text, "bytes value for b")
    assertEquals(intercept[IllegalStateException](scalar.float(1f)).text,
      "float value for b")
    // Values are handed over only after they were counted.
    assertEquals(intercept[IllegalStateException](
        new FeatureValueReader(new WireCursor).emit(new FeatureRun, scalar)).text,
      "FeatureValueReader.emit before count")
  }

  private val vector: DataType = new org.apache.spark.ml.linalg.VectorUDT

  /** VectorUDT's storage of a sparse vector (type 0) and of a dense one (type 1). */
  private def sparseVector(size: Int, indices: Seq[Int], values: Seq[Double]): InternalRow =
    InternalRow(0.toByte, size, array(indices: _*), array(values: _*))
  private def denseVector(values: Double*): InternalRow =
    InternalRow(1.toByte, null, null, array(values: _*))

  private def serializeSparse(s: StructType, row: InternalRow, separator: String = "/")
      : Array[Byte] = {
    val serializer = new ExampleSerializer(s, RecordType.Example, separator, sparseVectors = true)
    val n = serializer.serialize(row)
    serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
  }

  private def sparseFeatures(name: String, size: Long, indices: Seq[Long], values: Seq[Float])
      : Seq[Array[Byte]] = Seq(
    entry(s"$name/indices",
      int64List(if (indices.isEmpty) Array.emptyByteArray
      else packedInt64(indices: _*))),
    entry(s"$name/values",
      floatList(if (values.isEmpty) Array.emptyByteArray
      else packedFloat(values: _*))),
    entry(s"$name/size", int64List(packedInt64(size))))

  test("vectorLayout sparse: a SparseVector's stored entries, explicit zeros kept, and its size") {
    val s = schema("id" -> LongType, "v" -> vector)
    val bytes = serializeSparse(s,
      InternalRow(7L,
        sparseVector(1 << 20, Seq(1, 3, 1048575), Seq(0.5, 0.0, -2.0))))
    assertEquals(toHex(bytes),
      toHex(example(entry("id", int64List(packedInt64(7L))) +:
        sparseFeatures("v", 1L << 20, Seq(1L, 3L, 1048575L), Seq(0.5f, 0f, -2f)): _*)))
    // 2^20 dense floats would be 4 MB; the sparse record is under a hundred bytes.
    assertEquals(bytes.length, 88)
  }

  test("vectorLayout sparse: a DenseVector's non-zero entries, by bits (-0.0 and NaN kept)") {
    val s = schema("v" -> vector)
    val bytes = serializeSparse(s,
      InternalRow(denseVector(0.0, -0.0, Double.NaN, 1.5, 0.0, 1e-300)))
    // 1e-300 is not zero, so it is an entry, though float rounds it to 0.
    assertEquals(toHex(bytes),
      toHex(example(
        sparseFeatures("v", 6L, Seq(1L, 2L, 3L, 5L), Seq(-0.0f, Float.NaN, 1.5f, 0f)): _*)))
    // An all-zero vector: empty lists, and its size.
    assertEquals(toHex(serializeSparse(s, InternalRow(denseVector(0.0, 0.0)))),
      toHex(example(sparseFeatures("v", 2L, Nil, Nil): _*)))
    assertEquals(toHex(serializeSparse(s, InternalRow(sparseVector(5, Nil, Nil)))),
      toHex(example(sparseFeatures("v", 5L, Nil, Nil): _*)))
  }

  test("vectorLayout sparse: pathSeparator joins the parts' names; nulls write no feature") {
    val s = schema("v" -> vector, "w" -> vector)
    val bytes = serializeSparse(s, InternalRow(sparseVector(4, Seq(2), Seq(3.0)), null), ".")
    assertEquals(toHex(bytes),
      toHex(example(
        entry("v.indices", int64List(packedInt64(2L))),
        entry("v.values", floatList(packedFloat(3f))),
        entry("v.size", int64List(packedInt64(4L))))))
    // Without the option the vector is dense, as before.
    assertEquals(toHex(serialize(schema("v" -> vector),
        InternalRow(sparseVector(3, Seq(2),
          Seq(3.0))))), toHex(example(entry("v", floatList(packedFloat(0f, 0f, 3f))))))
  }

  test("vectorLayout sparse: a column named as a vector's part is refused before writing") {
    val s = schema("v" -> vector, "v/size" -> LongType)
    val e = intercept[IllegalArgumentException](
      new ExampleSerializer(s, RecordType.Example, "/", sparseVectors = true))
    assertEquals(e.text,
      "Columns 'v' and 'v/size' would both be the feature 'v/size'. " +
        "Rename one, or choose another pathSeparator.")
  }

  test("vectorLayout sparse: written vectors read back as the same SparseVector") {
    val s = schema("v" -> vector)
    val d = new ExampleDeserializer(s, RecordType.Example, "t.tfrecord")
    def roundTrip(v: InternalRow): (Byte, Int, Seq[Int], Seq[Long]) = {
      val bytes = serializeSparse(s, InternalRow(v))
      val r = d.decode(bytes, 0, bytes.length, 0L).getStruct(0, 4)
      (r.getByte(0), r.getInt(1), r.getArray(2).toIntArray.toSeq,
        r.getArray(3).toDoubleArray.toSeq.map(java.lang.Double.doubleToRawLongBits))
    }
    def bits(values: Double*): Seq[Long] = values.map(java.lang.Double.doubleToRawLongBits)
    // Values are float32: 0.1 reads back as 0.1f widened, exactly.
    assertEquals(roundTrip(sparseVector(1 << 20, Seq(0, 7, 1048575), Seq(0.1, 0.0, -3.0))),
      (0.toByte, 1 << 20, Seq(0, 7, 1048575), bits(0.1f.toDouble, 0.0, -3.0)))
    assertEquals(roundTrip(denseVector(0.0, -0.0, Double.NaN, 2.5)),
      (0.toByte, 4, Seq(1, 2, 3), bits(-0.0, Double.NaN, 2.5)))
    assertEquals(roundTrip(sparseVector(3, Nil, Nil)), (0.toByte, 3, Nil, Nil))
  }
}
