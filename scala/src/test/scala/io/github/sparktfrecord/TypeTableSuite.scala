package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.{BytesEntry, FeatureEncoder, FloatEntry, Int64Entry, Layout}
import io.github.sparktfrecord.codec.{TypeEntry, TypeTable}
import io.github.sparktfrecord.tools.JsonText
import io.github.sparktfrecord.wire.ProtoWire

/**
 * The type table: one entry per Spark type, whose kind, writer, reader setters, copy, JSON and
 * TFDS mapping agree with each other and with the components that consult them.
 */
class TypeTableSuite extends UnitSuite {
  import ProtoWire._
  import TypeTable._

  /** Each supported type, the kind it is written as, and a value of it (Spark's internal form). */
  private val samples: Seq[(DataType, Int, Any)] = Seq(
    (BooleanType, KindInt64, true),
    (ByteType, KindInt64, (-128).toByte),
    (ShortType, KindInt64, 32767.toShort),
    (IntegerType, KindInt64, Int.MinValue),
    (LongType, KindInt64, Long.MaxValue),
    (DateType, KindInt64, 19000),
    (TimestampType, KindInt64, -1L),
    (TimestampNTZType, KindInt64, 1700000000123456L),
    (FloatType, KindFloat, 1.5f),
    (DoubleType, KindFloat, 0.25),
    (DecimalType(10, 2), KindFloat, Decimal(BigDecimal("12.25"), 10, 2)),
    (DecimalType(38, 18), KindFloat, Decimal(BigDecimal("-3.5"), 38, 18)),
    (StringType, KindBytes, UTF8String.fromString("a€")),
    (BinaryType, KindBytes, Array[Byte](-1, 0, 7)))

  /** A value as munit compares it: binaries by content. */
  private def plain(v: Any): Any = v match {
    case b: Array[Byte] => b.toSeq
    case other => other
  }

  private def newRowWriter(): UnsafeRowWriter = {
    val w = new UnsafeRowWriter(1, 64)
    w.reset()
    w.zeroOutNullBytes()
    w
  }

  test("every supported type has one entry, whose kind the encoder writes") {
    for ((t, kind, _) <- samples) {
      val e = entry(t).getOrElse(fail(s"no entry for ${t.simpleString}"))
      assertEquals(e.dataType, t)
      assertEquals(e.kind, kind, t.simpleString)
      assertEquals(FeatureEncoder("c", t).kind, kind, t.simpleString)
      assertEquals(FeatureEncoder("c", ArrayType(t)).kind, kind, t.simpleString)
      assert(e.accepts(kind), t.simpleString)
    }
    for (t <- Seq(NullType, CalendarIntervalType, MapType(StringType, LongType), StructType(Nil),
        ArrayType(LongType))) {
      assertEquals(entry(t), None, t.simpleString)
    }
  }

  test("a column's layout and the entry of its values") {
    assertEquals(column(LongType), Some(Layout.Scalar -> LongEntry))
    assertEquals(column(ArrayType(StringType)), Some(Layout.List -> StringEntry))
    assertEquals(column(ArrayType(ArrayType(TimestampNTZType))),
      Some(Layout.Nested -> TimestampNTZEntry))
    assertEquals(column(ArrayType(DecimalType(5, 1))),
      Some(Layout.List -> DecimalEntry(DecimalType(5, 1))))
    assertEquals(column(ArrayType(ArrayType(ArrayType(LongType)))),
      Some(Layout.Nested -> LongEntry))
    assertEquals(depth(ArrayType(ArrayType(ArrayType(LongType)))), 3)
    assertEquals(innermost(ArrayType(ArrayType(ArrayType(LongType)))), LongType)
    assertEquals(column(ArrayType(ArrayType(StructType(Nil)))), None)
    assertEquals(column(StructType(Nil)), None)
    assertEquals(column(ArrayType(StructType(Nil))), None)
  }

  test("which kinds each entry reads: int64 into floats, any kind into a string") {
    val reads = samples.map { case (t, _, _) =>
      t.simpleString -> Seq(KindInt64, KindFloat, KindBytes).filter(entry(t).get.accepts)
    }
    val int64 = Seq(KindInt64)
    val numbers = Seq(KindInt64, KindFloat)
    assertEquals(reads,
      Seq("boolean" -> int64, "tinyint" -> int64, "smallint" -> int64,
        "int" -> int64, "bigint" -> int64, "date" -> int64, "timestamp" -> int64,
        "timestamp_ntz" -> int64, "float" -> numbers, "double" -> numbers,
        "decimal(10,2)" -> numbers, "decimal(38,18)" -> numbers,
        "string" -> Seq(KindInt64, KindFloat, KindBytes), "binary" -> Seq(KindBytes)))
  }

  test("what an entry writes, it reads back: every type, through its own kind") {
    for ((t, kind, v) <- samples) {
      val e = entry(t).get
      val row = InternalRow(v)
      val w = newRowWriter()
      e match {
        case i: Int64Entry => e.fromInt64(i.int64(row, 0), w, 0)
        case f: FloatEntry => e.fromFloat(f.float32(row, 0), w, 0)
        case b: BytesEntry =>
          val bytes = if (b.binary) row.getBinary(0) else row.getUTF8String(0).getBytes
          e.fromBytes(bytes, 0, bytes.length, w, 0)
      }
      assertEquals(plain(w.getRow.get(0, t)), plain(v), s"${t.simpleString} (kind $kind)")
    }
  }

  test("the reader's conversions and range checks") {
    def read(e: TypeEntry)(set: (UnsafeRowWriter) => Unit): Any = {
      val w = newRowWriter()
      set(w)
      w.getRow.get(0, e.dataType)
    }
    val d = DecimalEntry(DecimalType(10, 2))
    assertEquals(read(d)(d.fromFloat(0.1f, _, 0)), Decimal(BigDecimal("0.10"), 10, 2))
    assertEquals(read(d)(d.fromInt64(7L, _, 0)), Decimal(BigDecimal("7.00"), 10, 2))
    assertEquals(read(DoubleEntry)(DoubleEntry.fromInt64(3L, _, 0)), 3.0)
    assertEquals(read(FloatTypeEntry)(FloatTypeEntry.fromInt64(-2L, _, 0)), -2.0f)
    assertEquals(read(StringEntry)(StringEntry.fromInt64(-42L, _, 0)),
      UTF8String.fromString("-42"))
    assertEquals(read(StringEntry)(StringEntry.fromFloat(0.5f, _, 0)),
      UTF8String.fromString("0.5"))
    val refused = Seq[UnsafeRowWriter => Unit](
      ByteEntry.fromInt64(128L, _, 0), ShortEntry.fromInt64(-32769L, _, 0),
      IntegerEntry.fromInt64(1L << 31, _, 0), DateEntry.fromInt64(-(1L << 40), _, 0),
      BooleanEntry.fromInt64(2L, _, 0), d.fromFloat(Float.NaN, _, 0),
      d.fromInt64(100000000L, _, 0))
    for (set <- refused) intercept[ValueOutOfRangeException](set(newRowWriter()))
    intercept[IllegalStateException](BinaryEntry.fromInt64(1L, newRowWriter(), 0))
    intercept[IllegalStateException](LongEntry.fromFloat(1f, newRowWriter(), 0))
  }

  test("copy moves each type's value from unsafe rows and arrays into rows and arrays") {
    for ((t, _, v) <- samples) {
      val e = entry(t).get
      val schema = StructType(Seq(StructField("v", t), StructField("a", ArrayType(t))))
      val source = UnsafeProjection.create(schema)(
        InternalRow(v, new GenericArrayData(Array[Any](v, v, v))))
      val sources: Seq[SpecializedGetters] = Seq(source, InternalRow(v))
      for (from <- sources) {
        val w = newRowWriter()
        e.copy(from, 0, w, 0)
        assertEquals(plain(w.getRow.get(0, t)), plain(v), s"${t.simpleString} from $from")
      }
      // Into an array, as a list split per element is written: the values of a source array.
      val w = newRowWriter()
      val array = new UnsafeArrayWriter(w, e.elementSize)
      val previousCursor = w.cursor()
      array.initialize(3)
      val values = source.getArray(1)
      (0 until 3).foreach(i => e.copy(values, i, array, i))
      w.setOffsetAndSizeFromPreviousCursor(0, previousCursor)
      val copied = w.getRow.getArray(0)
      assertEquals((0 until 3).map(i => plain(copied.get(i, t))), Seq.fill(3)(plain(v)),
        t.simpleString)
    }
  }

  test("a decimal's null keeps its place in the row; other types' nulls are just null") {
    for ((t, _, _) <- samples) {
      val w = newRowWriter()
      entry(t).get.setNull(w, 0)
      assert(w.getRow.isNullAt(0), t.simpleString)
    }
  }

  test("JSON: one line per row, each type rendered for people, NaN and bytes as strings") {
    val schema = StructType(Seq("b" -> BooleanType, "y" -> ByteType, "s" -> ShortType,
      "i" -> IntegerType, "l" -> LongType, "d" -> DateType, "t" -> TimestampType,
      "n" -> TimestampNTZType, "f" -> FloatType, "x" -> DoubleType, "m" -> DecimalType(10, 2),
      "str" -> StringType, "bin" -> BinaryType, "arr" -> ArrayType(FloatType),
      "st" -> StructType(Seq(StructField("a", LongType))), "z" -> StringType)
      .map { case (n, t) => StructField(n, t) })
    val row = InternalRow(true, (-5).toByte, 300.toShort, 7, 1L << 40, 19000, 1500000L, 0L,
      Float.NaN, 0.1, Decimal(BigDecimal("12.25"), 10, 2),
      UTF8String.fromString("a\"b\n\u20ac\\"), Array[Byte](-1, 0),
      new GenericArrayData(Array[Any](1.5f, null, Float.NegativeInfinity)), InternalRow(3L), null)
    assertEquals(new JsonText(schema).row(row),
      """{"b": true, "y": -5, "s": 300, "i": 7, "l": 1099511627776, "d": "2022-01-08", """ +
        """"t": "1970-01-01T00:00:01.500Z", "n": "1970-01-01T00:00:00Z", "f": "NaN", """ +
        """"x": 0.1, "m": 12.25, "str": "a\"b\n""" + "\u20ac" + """\\", "bin": "0xff00", """ +
        """"arr": [1.5, null, "-Infinity"], "st": {"a": 3}, "z": null}""")
  }

  test("the supported types, by kind, as the unsupported-type message lists them") {
    assertEquals(describeSupported,
      "boolean, tinyint, smallint, int, bigint, date (days since 1970-01-01), timestamp, " +
        "timestamp_ntz (microseconds since 1970-01-01) (int64_list); float, double, decimal, " +
        "ML vectors (float_list); string, binary (bytes_list)")
  }

  test("TFDS: the feature each type is written as, the dtypes it holds, the type each reads as") {
    val features = samples.map { case (t, _, _) =>
      val e = entry(t).get
      t.simpleString -> e.tfdsDtype.map(e.tfdsConnector -> _)
    }
    val int64 = Some("Tensor" -> "int64")
    val float32 = Some("Tensor" -> "float32")
    assertEquals(features,
      Seq("boolean" -> Some("Tensor" -> "bool"), "tinyint" -> int64,
        "smallint" -> int64, "int" -> int64, "bigint" -> int64, "date" -> None,
        "timestamp" -> None, "timestamp_ntz" -> None, "float" -> float32, "double" -> float32,
        "decimal(10,2)" -> None, "decimal(38,18)" -> None, "string" -> Some("Text" -> "string"),
        "binary" -> Some("Tensor" -> "string")))
    val dtypes = Seq("bool", "int8", "uint16", "int32", "int64", "float16", "bfloat16",
      "float32", "float64", "string", "complex64")
    val holders = dtypes.map(d =>
      d -> samples.map(_._1).filter(t => entry(t).get.holdsTfds(d))
        .map(_.simpleString))
    val ints = Seq("tinyint", "smallint", "int", "bigint")
    val floats = Seq("float", "double")
    assertEquals(holders,
      Seq("bool" -> Seq("boolean"), "int8" -> ints, "uint16" -> ints,
        "int32" -> ints, "int64" -> ints, "float16" -> floats, "bfloat16" -> floats,
        "float32" -> floats, "float64" -> floats, "string" -> Seq("string", "binary"),
        "complex64" -> Nil))
    assertEquals(dtypes.map(d => d -> fromTfdsDtype(d).map(_.dataType)),
      Seq(
        "bool" -> Some(BooleanType), "int8" -> Some(LongType), "uint16" -> Some(LongType),
        "int32" -> Some(LongType), "int64" -> Some(LongType), "float16" -> Some(FloatType),
        "bfloat16" -> Some(FloatType), "float32" -> Some(FloatType),
        "float64" -> Some(DoubleType), "string" -> Some(BinaryType), "complex64" -> None))
    // What a type is written as, it holds.
    for ((t, _, _) <- samples; d <- entry(t).get.tfdsDtype) assert(entry(t).get.holdsTfds(d))
  }

  test("inference: int64 is bigint, float is float, bytes string unless not UTF-8") {
    assertEquals(Seq(inferred(KindInt64, false), inferred(KindFloat, true),
      inferred(KindBytes, false), inferred(KindBytes, true)),
      Seq(LongEntry, FloatTypeEntry, StringEntry, BinaryEntry))
  }
}
