package io.github.sparktfrecord

import java.math.{BigDecimal => JBigDecimal}

import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.{ColumnWriter, FeatureEncoder, RecordType}
import io.github.sparktfrecord.codec.{ExampleDeserializer, TFRecordSchema}
import io.github.sparktfrecord.wire.ProtoWire

/**
 * The type mapping: which Spark types a record type holds (with the errors that say which do
 * not), and which feature kinds each column type reads, with the value each kind gives.
 */
class TFRecordSchemaSuite extends UnitSuite {
  import ProtoBytes._
  import TFRecordSchema._

  private val scalars: Seq[DataType] = Seq(BooleanType, ByteType, ShortType, IntegerType,
    LongType, DateType, TimestampType, TimestampNTZType, FloatType, DoubleType,
    DecimalType(10, 2), DecimalType(38, 18), StringType, BinaryType)

  private val unsupportedTypes: Seq[DataType] = Seq(NullType, CalendarIntervalType,
    MapType(StringType, LongType), StructType(Seq(StructField("x", MapType(LongType, LongType)))),
    ArrayType(MapType(StringType, LongType)), ArrayType(ArrayType(ArrayType(NullType))),
    ArrayType(ArrayType(StructType(Nil))))

  private def schema(fields: (String, DataType)*): StructType =
    StructType(fields.map { case (n, t) => StructField(n, t) })

  test("supportsDataType: scalars, arrays of them and of such arrays, structs of these") {
    for (t <- scalars) {
      assert(supportsDataType(t), t.simpleString)
      assert(supportsDataType(ArrayType(t)), t.simpleString)
      assert(supportsDataType(ArrayType(ArrayType(t, containsNull = false))), t.simpleString)
      assert(supportsDataType(ArrayType(ArrayType(ArrayType(t)))), t.simpleString)
      val struct = schema("x" -> t, "y" -> ArrayType(t), "z" -> schema("w" -> t))
      assert(supportsDataType(struct), struct.simpleString)
      assert(supportsDataType(ArrayType(struct)), struct.simpleString)
    }
    for (t <- unsupportedTypes) assert(!supportsDataType(t), t.simpleString)
  }

  test("a map at any depth is ours to refuse, naming its path and what to use instead") {
    val m = MapType(StringType, LongType)
    for (t <- Seq(m, ArrayType(m), schema("x" -> LongType, "tags" -> m),
        ArrayType(schema(
          "tags" -> m)))) {
      assert(supportsOrExplains(t), t.simpleString) // so that Spark does not refuse it first
    }
    assert(!supportsOrExplains(CalendarIntervalType))
    def refused(s: StructType): TFRecordArgumentException = {
      val e = intercept[TFRecordArgumentException](validate(s, RecordType.Example, true))
      assertEquals(e.condition, TFRecordError.UnsupportedType)
      e
    }
    val top = refused(schema("id" -> LongType, "props" -> m))
    assertEquals(top.text,
      "Column 'props' has type map<string,bigint>, which TFRecord cannot " +
        "hold: a tf.train.Example feature is a flat list of one kind (int64, float or bytes), " +
        "and a map has no TensorFlow kind. Store its keys and values as two array columns " +
        "(map_keys(props), map_values(props)), or the map as a JSON string (to_json(props)).")
    assertEquals(top.parameters("column"), "props")
    val nested = refused(schema("meta" -> ArrayType(schema("id" -> LongType, "tags" -> m))))
    assert(nested.text.startsWith("Field 'meta.tags' of column 'meta' has type " +
        "map<string,bigint>, which TFRecord cannot hold"), nested.text)
    assert(nested.text.endsWith("(map_keys(`meta.tags`), map_values(`meta.tags`)), or the map " +
        "as a JSON string (to_json(`meta.tags`))."), nested.text)
    assertEquals(nested.parameters("column"), "meta.tags")
    assertEquals(refused(schema("a" -> ArrayType(m))).parameters("column"), "a")
  }

  test("an ANSI interval is ours to refuse, with its text as the alternative") {
    // VARIANT (Spark 4 only) is refused the same way: tests/test_types.py checks it.
    val d = DayTimeIntervalType()
    for (t <- Seq(d, YearMonthIntervalType(), ArrayType(d), schema("x" -> d))) {
      assert(supportsOrExplains(t), t.simpleString)
      assert(!supportsDataType(t), t.simpleString)
    }
    val e = intercept[TFRecordArgumentException](
      validate(schema("id" -> LongType, "d" -> d), RecordType.Example, true))
    assertEquals(e.condition, TFRecordError.UnsupportedType)
    assertEquals(e.text,
      "Column 'd' has type interval day to second, which TFRecord cannot hold: a " +
        "tf.train.Example feature is a flat list of one kind (int64, float or bytes), and an " +
        "interval has no TensorFlow kind. Store it as its text (cast(d AS string)), and read " +
        "that back with cast(text AS interval day to second).")
    val inArray = intercept[TFRecordArgumentException](
      validate(schema("ds" -> ArrayType(YearMonthIntervalType())), RecordType.Example, false))
    assert(inArray.text.startsWith("Column 'ds' (array<interval year to month>) holds an " +
        "interval year to month, which TFRecord cannot hold"), inArray.text)
  }

  test("validate: Example holds lists of lists at any depth (ragged), SequenceExample two") {
    val flat = schema(scalars.zipWithIndex.flatMap { case (t, i) =>
      Seq(s"s$i" -> t, s"a$i" -> ArrayType(t))
    }: _*)
    val deep = schema("t" -> ArrayType(ArrayType(ArrayType(LongType))))
    for (writing <- Seq(true, false)) {
      validate(flat, RecordType.Example, writing)
      validate(flat, RecordType.SequenceExample, writing)
      validate(schema("t" -> ArrayType(ArrayType(FloatType))), RecordType.SequenceExample,
        writing)
      validate(schema("t" -> ArrayType(ArrayType(FloatType))), RecordType.Example, writing)
      validate(deep, RecordType.Example, writing)
      validate(StructType.fromDDL("s struct<a array<array<int>>>, " +
          "x array<struct<t array<string>, u array<array<double>>>>"), RecordType.Example, writing)
    }
    val sequence = intercept[IllegalArgumentException](
      validate(deep, RecordType.SequenceExample, false))
    assertEquals(sequence.text,
      "Column 't' has type array<array<array<bigint>>>, which recordType SequenceExample " +
        "cannot hold. Supported: boolean, tinyint, smallint, int, bigint, date (days since " +
        "1970-01-01), timestamp, timestamp_ntz (microseconds since 1970-01-01) (int64_list); " +
        "float, double, decimal, ML vectors (float_list); string, binary (bytes_list); arrays of " +
        "these, arrays of such arrays (feature lists), and structs and arrays of structs of " +
        "these (path-named features). Deeper lists of lists are written ragged with recordType " +
        "Example.")
    // A column named as another's ragged feature.
    val clash = intercept[IllegalArgumentException](validate(
      schema("t" -> ArrayType(ArrayType(LongType)), "t/ragged_flat_values" -> LongType),
      RecordType.Example, true))
    assertEquals(clash.text,
      "Columns 't' and 't/ragged_flat_values' would both be the feature " +
        "'t/ragged_flat_values'. Rename one, or choose another pathSeparator.")
    // Maps are refused before, with their own message (below).
    for (t <- unsupportedTypes.filterNot(supportsOrExplains);
      recordType <- Seq(RecordType.Example,
        RecordType.SequenceExample)) {
      val e = intercept[IllegalArgumentException](
        validate(schema("c" -> t), recordType, writing = true))
      val column = t match {
        case s: StructType if s.nonEmpty => "c.x"
        case _ => "c"
      }
      val leafType = t match {
        case s: StructType if s.nonEmpty => s.head.dataType
        case _ => t
      }
      assert(e.text.startsWith(s"Column '$column' has type ${leafType.simpleString}, " +
          s"which recordType ${recordType.name} cannot hold. Supported: boolean, "), e.text)
      if (recordType == RecordType.SequenceExample) {
        assert(e.text.contains(", arrays of such arrays (feature lists), and structs"),
          e.text)
      }
    }
  }

  test("validate: ByteArray reads `byteArray binary` and writes one binary column") {
    val column = schema("byteArray" -> BinaryType)
    validate(column, RecordType.ByteArray, writing = false)
    validate(StructType(Nil), RecordType.ByteArray, writing = false) // count(): no column
    validate(column, RecordType.ByteArray, writing = true)
    validate(schema("payload" -> BinaryType), RecordType.ByteArray, writing = true)
    def message(s: StructType, writing: Boolean): String = intercept[IllegalArgumentException](
      validate(s, RecordType.ByteArray, writing)).text
    assertEquals(message(schema("payload" -> BinaryType), writing = false),
      "recordType ByteArray reads exactly one binary column (named 'byteArray' on read), but " +
        "the schema is struct<payload:binary>.")
    assertEquals(message(schema("byteArray" -> StringType), writing = false),
      "recordType ByteArray reads exactly one binary column (named 'byteArray' on read), but " +
        "the schema is struct<byteArray:string>.")
    assertEquals(message(schema("a" -> BinaryType, "b" -> BinaryType), writing = true),
      "recordType ByteArray writes exactly one binary column (named 'byteArray' on read), but " +
        "the schema is struct<a:binary,b:binary>.")
  }

  /** One feature `c` of `kind` holding one value: 1, 1.5 or "7". */
  private def record(kind: Int): Array[Byte] = example(entry("c",
    kind match {
      case ProtoWire.KindInt64 => int64List(packedInt64(1L))
      case ProtoWire.KindFloat => floatList(packedFloat(1.5f))
      case _ => bytesList(bytesValues("7"))
    }))

  /** The value column `c` of type `t` reads from a feature of `kind`, or the error message. */
  private def readAs(t: DataType, kind: Int): Either[String, Any] = {
    val d = new ExampleDeserializer(schema("c" -> t), RecordType.Example, "test.tfrecord")
    val bytes = record(kind)
    try {
      val row = d.decode(bytes, 0, bytes.length, 0L)
      Right(t match {
        case d: DecimalType => row.getDecimal(0, d.precision, d.scale).toJavaBigDecimal
        case StringType => row.getUTF8String(0).toString
        case BinaryType => row.getBinary(0).toSeq
        case ArrayType(e: DecimalType, _) =>
          row.getArray(0).getDecimal(0, e.precision, e.scale).toJavaBigDecimal
        case ArrayType(StringType, _) => row.getArray(0).getUTF8String(0).toString
        case ArrayType(BinaryType, _) => row.getArray(0).getBinary(0).toSeq
        case ArrayType(e, _) => row.getArray(0).get(0, e)
        case _ => row.get(0, t)
      })
    } catch {
      case e: TFRecordDataException => Left(e.text)
    }
  }

  test("which feature kinds each column type reads, and the value each gives") {
    import ProtoWire.{KindBytes, KindFloat, KindInt64}
    val one = Map[DataType, Any](BooleanType -> true, ByteType -> 1.toByte,
      ShortType -> 1.toShort, IntegerType -> 1, LongType -> 1L, DateType -> 1,
      TimestampType -> 1L, TimestampNTZType -> 1L, FloatType -> 1f, DoubleType -> 1.0,
      DecimalType(10, 2) -> new JBigDecimal("1.00"),
      DecimalType(38, 18) -> new JBigDecimal(
        "1.000000000000000000"), StringType -> "1")
    val oneAndAHalf = Map[DataType, Any](FloatType -> 1.5f, DoubleType -> 1.5,
      DecimalType(10, 2) -> new JBigDecimal("1.50"),
      DecimalType(38, 18) -> new JBigDecimal("1.500000000000000000"), StringType -> "1.5")
    val seven = Map[DataType, Any](StringType -> "7", BinaryType -> Seq('7'.toByte))
    for (t <- scalars; column <- Seq(t, ArrayType(t));
      (kind, values) <- Seq(KindInt64 -> one, KindFloat -> oneAndAHalf, KindBytes -> seven)) {
      val expected = values.get(t) match {
        case Some(v) => Right(v)
        case None =>
          val kindName = ProtoWire.KindNames(kind)
          Left(s"Column 'c' (${column.simpleString}) cannot be read from a $kindName feature, " +
            "in the record at byte offset 0 of test.tfrecord")
      }
      assertEquals(readAs(column, kind), expected,
        s"${column.simpleString} from ${ProtoWire.KindNames(kind)}")
    }
  }

  test("an empty or unset Feature is null for a scalar and empty for an array, of any kind") {
    for (t <- scalars;
      feature <- Seq(Array.emptyByteArray, int64List(), floatList(),
        bytesList())) {
      val bytes = example(entry("c", feature))
      val row = new ExampleDeserializer(schema("c" -> t, "a" -> ArrayType(t)),
        RecordType.Example, "test.tfrecord").decode(cat(bytes, example(entry("a", feature))),
        0, bytes.length * 2, 0L)
      assert(row.isNullAt(0), t.simpleString)
      assertEquals(row.getArray(1).numElements(), 0, t.simpleString)
    }
  }

  test("a type no feature maps to fails when the decoder or encoder is built") {
    for (t <- unsupportedTypes.filterNot(_.isInstanceOf[ArrayType])) {
      val decoding = intercept[IllegalArgumentException](
        ColumnWriter(StructField("c", t), 0, new UnsafeRowWriter(1)))
      assert(decoding.text.startsWith(s"Column 'c' has type ${t.simpleString}"))
      val encoding = intercept[IllegalArgumentException](FeatureEncoder("c", t))
      assert(encoding.text.startsWith(s"Column 'c' has type ${t.simpleString}"))
    }
  }
}
