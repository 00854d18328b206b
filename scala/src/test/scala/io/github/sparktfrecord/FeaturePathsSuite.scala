package io.github.sparktfrecord

import java.lang.management.ManagementFactory

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.{FeaturePaths, NestedRowAssembler, RecordType}
import io.github.sparktfrecord.codec.{ExampleDeserializer, ExampleSerializer}
import io.github.sparktfrecord.framing.TFRecordFraming

/**
 * Nested schemas as path-named features: the names and flat types of the leaves, what is refused,
 * rows through the serializer and back through the deserializer and the assembler, and the
 * nested paths allocating nothing per record.
 */
class FeaturePathsSuite extends UnitSuite {
  private val schema = StructType.fromDDL(
    "id bigint, image struct<encoded binary, height int, object struct<xmin array<float>, " +
      "label array<bigint>>>, boxes array<struct<x float, name string, inner struct<a " +
      "smallint, d decimal(30, 3)>>>")

  private def unsafe(s: StructType, rows: Seq[Row]): Seq[UnsafeRow] = {
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(s)
    val projection = UnsafeProjection.create(s)
    rows.map(r => projection(toCatalyst(r).asInstanceOf[InternalRow]).copy())
  }

  private val rows = Seq(
    Row(1L, Row(Array[Byte](-1, 0), 480, Row(Seq(0.5f, 0.25f), Seq(1L, Long.MinValue))),
      Seq(Row(0.125f, "a", Row(1.toShort, BigDecimal("1.250"))),
        Row(Float.NegativeInfinity, "é", Row((-2).toShort, BigDecimal("-99.001"))))),
    Row(2L, null, Seq()),
    Row(3L, Row(null, 5, null), null),
    Row(4L, Row(Array[Byte](), null, Row(Seq(), Seq())),
      Seq(Row(-0.0f, "",
        Row(0.toShort,
          BigDecimal("0.000"))))))

  test("leaves: names by path, flat types, in field order") {
    val leaves = FeaturePaths.leaves(schema, RecordType.Example, "/")
    assertEquals(leaves.map(_.name),
      Vector("id", "image/encoded", "image/height",
        "image/object/xmin", "image/object/label", "boxes/x", "boxes/name", "boxes/inner/a",
        "boxes/inner/d"))
    assertEquals(FeaturePaths.flatSchema(leaves).fields.map(_.dataType.simpleString).toSeq,
      Seq("bigint", "binary", "int", "array<float>", "array<bigint>", "array<float>",
        "array<string>", "array<smallint>", "array<decimal(30,3)>"))
    assertEquals(leaves(7).column, "boxes.inner.a")
    val steps = FeaturePaths.leaves(schema, RecordType.SequenceExample, ".")
    assertEquals(steps(5).name, "boxes.x")
    assertEquals(steps(5).dataType, ArrayType(ArrayType(FloatType, false), false))
    assert(!FeaturePaths.isNested(StructType.fromDDL("a array<array<int>>, b string")))
  }

  test("refused: arrays in a SequenceExample's arrays of structs' arrays, twice a name") {
    def refused(ddl: String, recordType: RecordType, message: String): Unit = {
      val e = intercept[IllegalArgumentException](
        FeaturePaths.leaves(StructType.fromDDL(ddl), recordType, "/"))
      assert(e.text.startsWith(message), e.text)
    }
    val vectors = StructType(Seq(StructField("b",
      ArrayType(StructType(Seq(
        StructField("v", new org.apache.spark.ml.linalg.VectorUDT)))))))
    for (recordType <- Seq(RecordType.Example, RecordType.SequenceExample)) {
      val e = intercept[IllegalArgumentException](FeaturePaths.leaves(vectors, recordType, "/"))
      assert(e.text.startsWith("Column 'b.v' has type vector: a vector inside an array of " +
          "structs is not supported"), e.text)
    }
    refused("b array<struct<x array<struct<y int>>>>", RecordType.Example,
      "Column 'b.x' has type array<struct<y:int>>: an array of structs inside an array")
    refused("b array<struct<x array<struct<y int>>>>", RecordType.SequenceExample,
      "Column 'b.x' has type array<struct<y:int>>: an array of structs inside an array")
    refused("b array<struct<x array<array<int>>>>", RecordType.SequenceExample,
      "Column 'b.x' has type array<array<int>>: an array of arrays inside an array of structs " +
        "has no feature layout in a SequenceExample (recordType Example writes it ragged)")
    refused("`a/b` int, a struct<b int>", RecordType.Example,
      "Columns 'a/b' and 'a.b' would both be the feature 'a/b'.")
    refused("a struct<>", RecordType.Example, "Column 'a' is a struct with no fields")
    FeaturePaths.leaves(StructType.fromDDL("b array<struct<x array<int>>>"),
      RecordType.SequenceExample, "/")
  }

  private def roundTrip(s: StructType, recordType: RecordType, input: Seq[Row]): Seq[Row] = {
    val serializer = new ExampleSerializer(s, recordType)
    val leaves = FeaturePaths.leaves(s, recordType, "/")
    val deserializer =
      new ExampleDeserializer(FeaturePaths.flatSchema(leaves), recordType, "test.tfrecord")
    val assembler = new NestedRowAssembler(s, leaves, recordType, "test.tfrecord")
    val toScala = CatalystTypeConverters.createToScalaConverter(s)
    unsafe(s, input).map { r =>
      val n = serializer.serialize(r)
      val data = serializer.buffer.slice(TFRecordFraming.HeaderBytes,
        TFRecordFraming.HeaderBytes + n)
      val back = assembler.assemble(deserializer.decode(data, 0, n, 0L), 0L)
      toScala(back.copy()).asInstanceOf[Row]
    }
  }

  private def same(a: Any, b: Any): Boolean = (a, b) match {
    case (x: Row, y: Row) => x.length == y.length && (0 until x.length).forall(i =>
        same(x.get(i), y.get(i)))
    case (x: Array[Byte], y: Array[Byte]) => x.sameElements(y)
    case (x: Seq[_], y: Seq[_]) => x.length == y.length && x.zip(y).forall { case (p, q) =>
        same(p, q)
      }
    case (x: java.math.BigDecimal, y: BigDecimal) => x.compareTo(y.bigDecimal) == 0
    case (x: Float, y: Float) => java.lang.Float.floatToRawIntBits(x) ==
        java.lang.Float.floatToRawIntBits(y)
    case _ => a == b
  }

  test("an Example: structs and arrays of structs come back as written") {
    val back = roundTrip(schema, RecordType.Example, rows)
    rows.zip(back).foreach { case (want, got) => assert(same(got, want), s"$got != $want") }
  }

  test("a SequenceExample: arrays of structs are steps, with lists in them") {
    val s = StructType.fromDDL(
      "id bigint, events array<struct<kind string, at bigint, scores array<float>>>")
    val input = Seq(Row(1L, Seq(Row("a", 1L, Seq(0.5f)), Row("b", 2L, Seq()))), Row(2L, null),
      Row(3L, Seq()))
    val back = roundTrip(s, RecordType.SequenceExample, input)
    input.zip(back).foreach { case (want, got) => assert(same(got, want), s"$got != $want") }
  }

  private val ragged = StructType.fromDDL(
    "id bigint, s struct<a array<array<int>>>, x array<struct<n bigint, tokens array<string>, " +
      "m array<array<float>>, o struct<b array<binary>>>>")
  private val raggedRows = Seq(
    Row(1L, Row(Seq(Seq(1, 2), Seq(), Seq(-3))),
      Seq(Row(7L, Seq("a", ""), Seq(Seq(Float.NaN, -0.0f), Seq()), Row(Seq(Array[Byte](-1)))),
        Row(8L, Seq(), Seq(), Row(Seq())), Row(9L, Seq("\u00e9"), Seq(Seq(1f)), Row(Seq())))),
    Row(2L, Row(Seq()), Seq()),
    Row(3L, null, null),
    Row(4L, Row(null), Seq(Row(1L, Seq(), Seq(Seq(), Seq()), Row(Seq())))))

  test("Example: lists of lists in structs and arrays of structs, ragged per leaf") {
    val split = FeaturePaths.leaves(ragged, RecordType.Example, "/", splitRagged = true)
    assertEquals(split.map(_.name).filter(_.startsWith("x/m")),
      Vector("x/m/ragged_row_lengths_0", "x/m/ragged_row_lengths_1", "x/m/ragged_flat_values"))
    val leaves = FeaturePaths.leaves(ragged, RecordType.Example, "/")
    assertEquals(FeaturePaths.flatSchema(leaves).fields.map(_.dataType.simpleString).toSeq,
      Seq("bigint", "array<array<int>>", "array<bigint>", "array<array<string>>",
        "array<array<array<float>>>", "array<array<binary>>"))
    val back = roundTrip(ragged, RecordType.Example, raggedRows)
    // A struct whose only field, a list of lists, is null is written as no feature: null.
    val want = raggedRows.updated(3, Row(4L, null, raggedRows(3).get(2)))
    want.zip(back).foreach { case (w, got) => assert(same(got, w), s"$got != $w") }
  }

  test("an array of structs whose ragged leaf disagrees on the element count fails on read") {
    val s = StructType.fromDDL("x array<struct<n bigint, tokens array<string>>>")
    val flatSchema = StructType.fromDDL("`x/n` array<bigint>, " +
      "`x/tokens/ragged_row_lengths_0` array<bigint>, `x/tokens/ragged_flat_values` array<string>")
    val flat = new ExampleSerializer(flatSchema, RecordType.Example)
    // Two elements by x/n, three by the tokens' row lengths.
    val n = flat.serialize(unsafe(flatSchema,
      Seq(Row(Seq(1L, 2L), Seq(1L, 0L, 1L),
        Seq("a", "b")))).head)
    val leaves = FeaturePaths.leaves(s, RecordType.Example, "/")
    val assembler = new NestedRowAssembler(s, leaves, RecordType.Example, "test.tfrecord")
    val d =
      new ExampleDeserializer(FeaturePaths.flatSchema(leaves), RecordType.Example, "test.tfrecord")
    val record = flat.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    val e = intercept[TFRecordDataException](assembler.assemble(d.decode(record, 0, n, 5L), 5L))
    assertEquals(e.text,
      "Column 'x' (array<struct>) is read from lists of unequal length: " +
        "'x/n' 2, 'x/tokens' 3, in the record at byte offset 5 of test.tfrecord")
    assertEquals(e.column, "x")
  }

  private val threads =
    ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]

  private def bytesPerRecord(records: Int)(body: Int => Unit): Double = {
    var best = Long.MaxValue
    for (_ <- 0 until 8) {
      val before = threads.getThreadAllocatedBytes(Thread.currentThread().getId)
      var i = 0
      while (i < records) {
        body(i)
        i += 1
      }
      best = math.min(best,
        threads.getThreadAllocatedBytes(Thread.currentThread().getId) -
          before)
    }
    best.toDouble / records
  }

  test("writing and reading nested rows allocates nothing per record") {
    // Without the decimal, whose values Spark hands over as objects.
    val s = StructType.fromDDL("id bigint, image struct<encoded binary, height int, object " +
      "struct<xmin array<float>, label array<bigint>>>, boxes array<struct<x float, name string, " +
      "inner struct<a smallint>>>")
    val scalaRows = rows.map { r =>
      val boxes = Option(r.getSeq[Row](2)).map(_.map(b =>
        Row(b.get(0), b.get(1), Row(b.getStruct(2).get(0))))).orNull
      Row(r.get(0), r.get(1), boxes)
    }
    // As AllocationSuite does, rows whose strings and arrays exist already (an UnsafeRow makes
    // one object per string or array read, nested or not); the structs are read in place.
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(s)
    val generic = scalaRows.map(r => toCatalyst(r).asInstanceOf[InternalRow]).toArray
    val input = unsafe(s, scalaRows).toArray
    val serializer = new ExampleSerializer(s, RecordType.Example)
    val perGeneric = bytesPerRecord(100000)(i => serializer.serialize(generic(i & 3)))
    assert(perGeneric < 1.0, s"the nested serializer allocates $perGeneric bytes per row")
    val perRecord = readingAllocates(s, records(serializer, input))
    assert(perRecord < 1.0, s"reading nested rows allocates $perRecord bytes per record")
  }

  /** Each row serialized: the data of its record. */
  private def records(serializer: ExampleSerializer, rows: Array[UnsafeRow]): Array[Array[Byte]] =
    rows.map { r =>
      val n = serializer.serialize(r)
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }

  /** The bytes allocated per record reading four `records` as rows of `s`, over and over. */
  private def readingAllocates(s: StructType, records: Array[Array[Byte]]): Double = {
    val leaves = FeaturePaths.leaves(s, RecordType.Example, "/")
    val deserializer =
      new ExampleDeserializer(FeaturePaths.flatSchema(leaves), RecordType.Example, "mem")
    val assembler = new NestedRowAssembler(s, leaves, RecordType.Example, "mem")
    bytesPerRecord(100000) { i =>
      val d = records(i & 3)
      assembler.assemble(deserializer.decode(d, 0, d.length, 0L), 0L)
    }
  }

  /** `ddl` with the fixed list length `n` on the field `field` of the array of structs `array`. */
  private def withListLength(ddl: String, array: String, field: String, n: Int): StructType = {
    val s = StructType.fromDDL(ddl)
    StructType(s.fields.map {
      case f @ StructField(`array`, ArrayType(e: StructType, c), _, _) =>
        f.copy(dataType = ArrayType(StructType(e.fields.map {
            case g if g.name == field =>
              g.copy(metadata = new MetadataBuilder()
                .putLong(FeaturePaths.ListLengthKey, n).build())
            case g => g
          }), c))
      case f => f
    })
  }

  private val boxes = withListLength(
    "id bigint, objects array<struct<bbox array<float>, label bigint>>", "objects", "bbox", 4)
  private val boxRows = Seq(
    Row(1L, Seq(Row(Seq(0.1f, 0.2f, 0.3f, -0.0f), 7L), Row(Seq(Float.NaN, 1f, 2f, 3f), 8L))),
    Row(2L, Seq()), Row(3L, null),
    Row(4L, Seq(Row(Seq(1f, 2f, 3f, 4f), Long.MinValue))))

  test("a fixed-length list of an array of structs: concatenated on write, split on read") {
    val leaves = FeaturePaths.leaves(boxes, RecordType.Example, "/")
    assert(leaves(1).concatenated && leaves(1).listLength == 4)
    assert(!leaves(2).concatenated)
    val back = roundTrip(boxes, RecordType.Example, boxRows)
    boxRows.zip(back).foreach { case (want, got) => assert(same(got, want), s"$got != $want") }
    // On the wire: one list of 4 floats per element, as TensorFlow Datasets stores it.
    val serializer = new ExampleSerializer(boxes, RecordType.Example)
    val n = serializer.serialize(unsafe(boxes, boxRows.take(1)).head)
    val flat =
      new ExampleDeserializer(FeaturePaths.flatSchema(leaves), RecordType.Example, "test.tfrecord")
        .decode(serializer.buffer.slice(TFRecordFraming.HeaderBytes,
          TFRecordFraming.HeaderBytes + n), 0, n, 0L)
    assertEquals(flat.getArray(1).toFloatArray().length, 8)
    assertEquals(flat.getArray(2).toLongArray().toSeq, Seq(7L, 8L))
  }

  test("a fixed-length list of another length fails on write and on read") {
    val serializer = new ExampleSerializer(boxes, RecordType.Example)
    val e = intercept[TFRecordDataException](serializer.serialize(
      unsafe(boxes, Seq(Row(1L, Seq(Row(Seq(1f, 2f, 3f, 4f), 1L), Row(Seq(1f), 2L))))).head))
    assert(e.text.contains("Column 'objects.bbox': element 1 of its array of structs " +
        "holds 1 values, but this field holds exactly 4 per element"), e.text)
    // 6 floats for 2 labels: not 4 per element.
    val flatSchema = StructType.fromDDL("id bigint, `objects/bbox` array<float>, " +
      "`objects/label` array<bigint>")
    val flat = new ExampleSerializer(flatSchema, RecordType.Example)
    val n = flat.serialize(unsafe(flatSchema,
      Seq(Row(1L, Seq(1f, 2f, 3f, 4f, 5f, 6f),
        Seq(1L, 2L)))).head)
    val leaves = FeaturePaths.leaves(boxes, RecordType.Example, "/")
    val assembler = new NestedRowAssembler(boxes, leaves, RecordType.Example, "test.tfrecord")
    val d =
      new ExampleDeserializer(FeaturePaths.flatSchema(leaves), RecordType.Example, "test.tfrecord")
    val record = flat.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    // The file the assembler was built for, and the offset the record came with.
    val read = intercept[TFRecordDataException](
      assembler.assemble(d.decode(record, 0, n, 77L), 77L))
    assert(read.text.contains("'objects/bbox' 6 values, 4 per element, 'objects/label' 2"),
      read.text)
    assert(read.text.endsWith("in the record at byte offset 77 of test.tfrecord"),
      read.text)
    assertEquals((read.path, read.offset), ("test.tfrecord", 77L))
  }

  test("concatenated lists allocate nothing per record, written or read") {
    val input = unsafe(boxes, boxRows).toArray
    val serializer = new ExampleSerializer(boxes, RecordType.Example)
    val perRow = bytesPerRecord(100000)(i => serializer.serialize(input(i & 3)))
    assert(perRow < 1.0, s"writing concatenated lists allocates $perRow bytes per row")
    val perRecord = readingAllocates(boxes, records(serializer, input))
    assert(perRecord < 1.0, s"splitting concatenated lists allocates $perRecord bytes per record")
  }
}
