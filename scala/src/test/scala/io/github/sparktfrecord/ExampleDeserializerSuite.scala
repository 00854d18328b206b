package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.{ExampleDeserializer, RecordType, RowDecoder}
import io.github.sparktfrecord.wire.FeatureOrder

/**
 * Example and SequenceExample bytes, built by hand (or as TensorFlow wrote them), through
 * [[ExampleDeserializer]] into rows with exact values; malformed bytes into errors that name the
 * byte offset. Run with the general path only; [[FastPathSuite]] runs it with the fast path tried
 * first.
 */
class ExampleDeserializerSuite(fastPath: Boolean) extends UnitSuite {
  import ProtoBytes._

  def this() = this(false)

  private def schema(fields: (String, DataType)*): StructType =
    StructType(fields.map { case (n, t) => StructField(n, t) })

  /** The deserializer of a file `test.tfrecord`, whose records come at byte offset 1000. */
  private def deserializer(s: StructType, recordType: RecordType): ExampleDeserializer =
    new ExampleDeserializer(s, recordType, "test.tfrecord", fastPath = fastPath)

  /**
   * `record` decoded from the middle of a buffer, between bytes that must not be read (tags
   * before it, continuation bytes after it).
   */
  private def decode(d: RowDecoder, record: Array[Byte], offset: Long): UnsafeRow =
    d.decode(cat(hex("0a 0a 0a"), record, Array.fill[Byte](9)(-1)), 3, 3 + record.length,
      offset)

  private final val Offset = 1000L

  test("an Example schema is read by the path this suite is for") {
    val d = deserializer(schema("a" -> LongType, "d" -> DecimalType(10, 2)), RecordType.Example)
    assertEquals(d.triesFastPath, fastPath)
    assert(!deserializer(schema("a" -> LongType), RecordType.SequenceExample).triesFastPath)
  }

  /** Decodes `record` followed by bytes that must not be read (continuation bytes). */
  private def read(
      s: StructType,
      record: Array[Byte],
      recordType: RecordType = RecordType.Example): UnsafeRow =
    decode(deserializer(s, recordType), record, Offset)

  private def readSequence(s: StructType, record: Array[Byte]): UnsafeRow =
    read(s, record, RecordType.SequenceExample)

  private def longs(row: UnsafeRow, i: Int): Seq[Long] = row.getArray(i).toLongArray.toSeq
  private def floats(row: UnsafeRow, i: Int): Seq[Float] = row.getArray(i).toFloatArray.toSeq
  private def strings(row: UnsafeRow, i: Int): Seq[String] = {
    val a = row.getArray(i)
    (0 until a.numElements()).map(a.getUTF8String(_).toString)
  }
  private def nestedLongs(row: UnsafeRow, i: Int): Seq[Seq[Long]] = {
    val a = row.getArray(i)
    (0 until a.numElements()).map(j => a.getArray(j).toLongArray.toSeq)
  }

  private def failure(
      s: StructType,
      record: Array[Byte],
      recordType: RecordType = RecordType.Example): TFRecordDataException = {
    val e = intercept[TFRecordDataException](read(s, record, recordType))
    assertEquals(e.path, "test.tfrecord")
    assertEquals(e.offset, Offset)
    e
  }

  /** The message of a record that is not valid protobuf, `what` at byte `at` of the record. */
  private def malformed(what: String, at: Int, message: String = "tf.train.Example"): String =
    s"Malformed $message ($what at byte $at of the record), in the record at byte offset 1000 " +
      "of test.tfrecord"

  test("TensorFlow's Example bytes decode to exact values") {
    // tf.train.Example(...).SerializeToString() from TensorFlow 2.21.
    val ints = hex("0a 17 0a 15 0a 01 61 12 10 1a 0e 0a 0c ff ff ff ff ff ff ff ff ff 01 ac 02")
    assertEquals(longs(read(schema("a" -> ArrayType(LongType)), ints), 0), Seq(-1L, 300L))
    val fl = hex("0a 13 0a 11 0a 01 66 12 0c 12 0a 0a 08 00 00 c0 3f 00 00 00 c0")
    assertEquals(floats(read(schema("f" -> ArrayType(FloatType)), fl), 0), Seq(1.5f, -2.0f))
    val strs = hex("0a 0f 0a 0d 0a 01 73 12 08 0a 06 0a 02 68 69 0a 00")
    assertEquals(strings(read(schema("s" -> ArrayType(StringType)), strs), 0), Seq("hi", ""))
    val one = read(schema("a" -> LongType), hex("0a 0c 0a 0a 0a 01 61 12 05 1a 03 0a 01 01"))
    assertEquals(one.getLong(0), 1L)
  }

  test("scalars and arrays of every kind, with their extremes") {
    val record = example(
      entry("min", int64List(packedInt64(Long.MinValue))),
      entry("max", int64List(packedInt64(Long.MaxValue))),
      entry("f", floatList(packedFloat(Float.MinPositiveValue))),
      entry("s", bytesList(bytesValues("h\u00e9llo \u6f22"))),
      entry("b", bytesList(field(1, Array[Byte](0, -1, 7)))),
      entry("ints", int64List(packedInt64(0L, 127L, 128L, -1L, 1L << 62))),
      entry("floats", floatList(packedFloat(Float.NegativeInfinity, -0.0f, Float.MaxValue))),
      entry("strs", bytesList(bytesValues("", "x" * 200))))
    val row = read(schema("min" -> LongType, "max" -> LongType, "f" -> FloatType,
      "s" -> StringType, "b" -> BinaryType, "ints" -> ArrayType(LongType),
      "floats" -> ArrayType(FloatType), "strs" -> ArrayType(StringType)), record)
    assertEquals(row.getLong(0), Long.MinValue)
    assertEquals(row.getLong(1), Long.MaxValue)
    assertEquals(row.getFloat(2), Float.MinPositiveValue)
    assertEquals(row.getUTF8String(3).toString, "h\u00e9llo \u6f22")
    assertEquals(row.getBinary(4).toSeq, Seq[Byte](0, -1, 7))
    assertEquals(longs(row, 5), Seq(0L, 127L, 128L, -1L, 1L << 62))
    assertEquals(floats(row, 6).map(java.lang.Float.floatToRawIntBits),
      Seq(Float.NegativeInfinity, -0.0f, Float.MaxValue).map(java.lang.Float.floatToRawIntBits))
    assertEquals(strings(row, 7), Seq("", "x" * 200))
  }

  test("a NaN float keeps its bits") {
    val nan = java.lang.Float.intBitsToFloat(0x7fc00001)
    val row = read(schema("f" -> FloatType, "fs" -> ArrayType(FloatType)),
      example(entry("f", floatList(packedFloat(nan))), entry("fs", floatList(packedFloat(nan)))))
    assertEquals(java.lang.Float.floatToRawIntBits(row.getFloat(0)), 0x7fc00001)
    assertEquals(java.lang.Float.floatToRawIntBits(row.getArray(1).getFloat(0)), 0x7fc00001)
  }

  test("packed, unpacked and mixed int64 and float lists read alike") {
    val ints = Seq(5L, -1L, 300L, 0L, Long.MaxValue)
    val fls = Seq(0.5f, -3.25f, 1e30f)
    val s = schema("i" -> ArrayType(LongType), "f" -> ArrayType(FloatType))
    val encodings = Seq(
      "packed" -> example(entry("i", int64List(packedInt64(ints: _*))),
        entry("f", floatList(packedFloat(fls: _*)))),
      "unpacked" -> example(entry("i", int64List(unpackedInt64(ints: _*))),
        entry("f", floatList(unpackedFloat(fls: _*)))),
      "mixed in one list" -> example(
        entry("i",
          int64List(packedInt64(ints.take(2): _*), unpackedInt64(ints(2)),
            packedInt64(), packedInt64(ints.drop(3): _*))),
        entry("f", floatList(unpackedFloat(fls.head), packedFloat(fls.tail: _*)))))
    for ((name, record) <- encodings) {
      val row = read(s, record)
      assertEquals(longs(row, 0), ints, name)
      assertEquals(floats(row, 1), fls, name)
    }
    // A scalar from one unpacked value.
    val scalar = read(schema("i" -> LongType, "f" -> FloatType),
      example(
        entry("i", int64List(unpackedInt64(-7L))), entry("f", floatList(unpackedFloat(2.5f)))))
    assertEquals((scalar.getLong(0), scalar.getFloat(1)), (-7L, 2.5f))
  }

  test("long packed runs: 1000 int64 of every size and 1000 floats") {
    val ints = (0 until 1000).map(i => if (i % 2 == 0) i.toLong << (i % 57) else -i.toLong)
    val fls = (0 until 1000).map(_ * 0.25f)
    val row = read(schema("i" -> ArrayType(LongType), "f" -> ArrayType(FloatType)),
      example(
        entry("i", int64List(packedInt64(ints: _*))), entry("f", floatList(packedFloat(fls: _*)))))
    assertEquals(longs(row, 0), ints)
    assertEquals(floats(row, 1), fls)
  }

  test("a Feature's last kind wins; lists of that kind since the last switch concatenate") {
    val s = schema("i" -> ArrayType(LongType), "f" -> ArrayType(FloatType),
      "s" -> ArrayType(StringType), "back" -> ArrayType(LongType), "n" -> LongType)
    val row = read(s,
      example(
        entry("i", cat(int64List(packedInt64(1L, 2L)), int64List(), int64List(packedInt64(3L)))),
        entry("f",
          cat(int64List(packedInt64(9L)), floatList(packedFloat(1f)),
            floatList(unpackedFloat(2f, 3f)))),
        entry("s", cat(bytesList(bytesValues("a")), bytesList(bytesValues("b", "c")))),
        entry("back",
          cat(int64List(packedInt64(1L)), floatList(packedFloat(2f)),
            int64List(packedInt64(7L, 8L)), int64List(unpackedInt64(9L)))),
        entry("n", cat(int64List(packedInt64(4L)), int64List()))))
    assertEquals(longs(row, 0), Seq(1L, 2L, 3L))
    assertEquals(floats(row, 1), Seq(1f, 2f, 3f))
    assertEquals(strings(row, 2), Seq("a", "b", "c"))
    assertEquals(longs(row, 3), Seq(7L, 8L, 9L))
    assertEquals(row.getLong(4), 4L)
    // The int64 values before the switch to float are gone: an int64 column cannot read it.
    val e = failure(schema("f" -> ArrayType(LongType)),
      example(entry("f", cat(int64List(packedInt64(9L)), floatList(packedFloat(1f))))))
    assertEquals(e.text,
      "Column 'f' (array<bigint>) cannot be read from a float_list " +
        "feature, in the record at byte offset 1000 of test.tfrecord")
  }

  test("unknown fields are skipped at every level") {
    val unknown = cat(varintField(14, -1L), fixed64Field(15, 1L), fixed32Field(16, 2),
      field(17, hex("ff ff")), group(18, varintField(1, 3), field(2, hex("00"))))
    val record = cat(unknown,
      field(1, // Example.features
        unknown,
        field(1, unknown,
          field(2, // an entry, value before key
            unknown, int64List(unknown, packedInt64(1L, 2L), unknown, unpackedInt64(3L), unknown),
            unknown, int64List(varintField(1, 4L)), unknown), unknown, field(1, utf8("i")),
          unknown),
        unknown,
        entry("f", cat(unknown, floatList(unknown, packedFloat(0.5f), unknown))),
        entry("s", cat(bytesList(unknown, bytesValues("x"), unknown, bytesValues("y")), unknown))),
      unknown)
    val row = read(schema("i" -> ArrayType(LongType), "f" -> FloatType,
      "s" -> ArrayType(
        StringType)), record)
    assertEquals(longs(row, 0), Seq(1L, 2L, 3L, 4L))
    assertEquals(row.getFloat(1), 0.5f)
    assertEquals(strings(row, 2), Seq("x", "y"))
  }

  test("map entries: value before key, missing key or value, repeated key (the last wins)") {
    val s = schema("v" -> LongType, "b" -> ArrayType(LongType), "c" -> FloatType,
      "d" -> ArrayType(FloatType), "e" -> StringType, "k" -> LongType)
    val row = read(s,
      example(
        field(1, field(2, int64List(packedInt64(1L))), field(1, utf8("v"))), // value, then key
        field(1, field(2, int64List(packedInt64(99L)))), // no key: the feature named ""
        field(1, field(1, utf8("b"))), // no value: an empty Feature
        entry("c", floatList(packedFloat(1f))),
        entry("c", int64List(packedInt64(2L))), // the same key with another kind
        entry("d", floatList(packedFloat(1f, 2f))),
        entry("d", floatList(packedFloat(3f))), // map values replace, lists do not concatenate
        field(1, field(1, utf8("e"))), // no value: an unset Feature, so a null scalar
        field(1, field(1, utf8("x")), field(2, int64List(packedInt64(5L))), field(1, utf8("k")))))
    assertEquals(row.getLong(0), 1L)
    assertEquals(longs(row, 1), Seq.empty[Long])
    assertEquals(row.getFloat(2), 2f)
    assertEquals(floats(row, 3), Seq(3f))
    assert(row.isNullAt(4))
    assertEquals(row.getLong(5), 5L) // an entry naming two keys is the last one's
    // The key-less entry is the feature named "", as protobuf reads a missing string.
    assertEquals(read(schema("" -> LongType),
      example(field(1,
        field(2,
          int64List(packedInt64(99L)))))).getLong(0), 99L)
  }

  test("a repeated key whose first entry was empty: the last entry's value, not null") {
    val s = schema("a" -> LongType, "b" -> ArrayType(FloatType), "c" -> StringType,
      "d" -> DecimalType(30, 2), "e" -> LongType, "f" -> ArrayType(LongType))
    val empty = Array.emptyByteArray // an unset Feature: a null scalar, an empty array
    val row = read(s,
      example(
        entry("a", empty), entry("b", empty), entry("c", bytesList()), entry("d", empty),
        entry("a", int64List(packedInt64(7L))), entry("b", floatList(packedFloat(1f, 2f))),
        entry("c", bytesList(field(1, utf8("x")))), entry("d", int64List(packedInt64(3L))),
        // And the other way round: a value, then an empty entry, which wins.
        entry("e", int64List(packedInt64(5L))), entry("e", empty),
        entry("f", int64List(packedInt64(5L))), entry("f", int64List())))
    assertEquals(row.getLong(0), 7L)
    assertEquals(floats(row, 1), Seq(1f, 2f))
    assertEquals(row.getUTF8String(2).toString, "x")
    assertEquals(row.getDecimal(3, 30, 2).toJavaBigDecimal, new java.math.BigDecimal("3.00"))
    assert(row.isNullAt(4))
    assertEquals(longs(row, 5), Seq.empty[Long])
  }

  test("repeated Example.features messages merge, the last value of a key winning") {
    val row = read(schema("a" -> LongType, "b" -> LongType, "c" -> LongType),
      cat(
        example(entry("a", int64List(packedInt64(1L))), entry("b", int64List(packedInt64(2L)))),
        example(entry("b", int64List(packedInt64(3L)))),
        example(entry("c", int64List(packedInt64(4L))))))
    assertEquals((row.getLong(0), row.getLong(1), row.getLong(2)), (1L, 3L, 4L))
  }

  test("absent columns are null; unwanted features are skipped without reading their values") {
    // "junk" is not valid as a Feature (a float list of 3 bytes), but nobody asked for it.
    val junk = floatList(field(1, hex("00 00 80")))
    val record = example(entry("junk", junk),
      entry("a", int64List(packedInt64(5L))), entry("x", bytesList(bytesValues("y"))))
    val row = read(schema("a" -> LongType, "missing" -> StringType,
      "none" -> ArrayType(LongType)), record)
    assertEquals(row.getLong(0), 5L)
    assert(row.isNullAt(1))
    assert(row.isNullAt(2))
    assertEquals(row.numFields, 3)
    val e = failure(schema("junk" -> ArrayType(FloatType)), record)
    assertEquals(e.text,
      malformed("packed float run of 3 bytes", record.indexOfSlice(junk) + 3))
  }

  test("one deserializer, many records: the row is reset and features come in any order") {
    val d = deserializer(schema("a" -> LongType, "b" -> StringType, "c" -> ArrayType(LongType)),
      RecordType.Example)
    def row(record: Array[Byte]): (Any, Any, Any) = {
      val r = decode(d, record, Offset)
      def orNull(i: Int)(value: => Any): Any = if (r.isNullAt(i)) null else value
      (orNull(0)(r.getLong(0)), orNull(1)(r.getUTF8String(1).toString), orNull(2)(longs(r, 2)))
    }
    val a = entry("a", int64List(packedInt64(1L)))
    val b = entry("b", bytesList(bytesValues("x")))
    val c = entry("c", int64List(packedInt64(2L, 3L)))
    val others = (1 to 20).map(i => entry(s"other$i", int64List(packedInt64(i.toLong))))
    assertEquals(row(example(a, b, c)), (1L, "x", Seq(2L, 3L)))
    assertEquals(row(example(c, a)), (1L, null, Seq(2L, 3L)))
    assertEquals(row(example(others ++ Seq(b, a): _*)), (1L, "x", null))
    assertEquals(row(example()), (null, null, null))
    assertEquals(row(Array.emptyByteArray), (null, null, null))
    assertEquals(row(example(b, c, a)), (1L, "x", Seq(2L, 3L)))
  }

  test("names are recognised by position; a name that changed there is looked up anew") {
    val long = "image/object/bbox/xmin"
    val d = deserializer(schema("feature_01" -> LongType, "f" -> LongType, long -> LongType),
      RecordType.Example)
    def row(record: Array[Byte]): Seq[Any] = {
      val r = decode(d, record, Offset)
      (0 until 3).map(i => if (r.isNullAt(i)) null else r.getLong(i))
    }
    def e(name: String, v: Long): Array[Byte] = entry(name, int64List(packedInt64(v)))
    assertEquals(row(example(e("feature_01", 1), e("f", 2), e(long, 3))), Seq(1L, 2L, 3L))
    // The same lengths, differing in the last byte (past the first eight), the only byte, or
    // the last of a long name: none of them is wanted.
    assertEquals(row(example(e("feature_02", 1), e("g", 2), e(long.init + "x", 3))),
      Seq(null, null, null))
    assertEquals(row(example(e("feature_01", 4), e("f", 5), e(long, 6))), Seq(4L, 5L, 6L))
    // Wanted names where unwanted ones stood, and the other way round.
    assertEquals(row(example(e("f", 7), e("feature_02", 8), e("feature_01", 9))),
      Seq(9L, 7L, null))
    // The map's last entry unwanted, then another `features` message: both are read.
    assertEquals(row(cat(example(e("f", 1), e("unwanted", 2)), example(e(long, 3)))),
      Seq(null, 1L, 3L))
    // Entries laid out in other ways between the usual ones: the value before the key, and a
    // value of 128 bytes or more (a longer length prefix).
    val valueFirst = field(1, field(2, int64List(packedInt64(5L))), field(1, utf8("f")))
    val big = entry("x", int64List(packedInt64(Seq.fill(30)(-1L): _*)))
    assertEquals(row(example(valueFirst, big, e(long, 6), e("y", 0))), Seq(null, 5L, 6L))
    assertEquals(row(example(big, e("feature_01", 1), big, e("f", 2))), Seq(1L, 2L, null))
    // Past the positions and name lengths it remembers, names are looked up each time.
    val longName = "n" * 2000
    val far = deserializer(schema(longName -> LongType, "last" -> LongType), RecordType.Example)
    val many = (0 until FeatureOrder.MaxPositions + 10).map(i => e(s"u$i", i))
    for (v <- 1L to 2L) {
      val record = example(many ++ Seq(e(longName, v), e("last", -v)): _*)
      val r = decode(far, record, Offset)
      assertEquals((r.getLong(0), r.getLong(1)), (v, -v))
    }
  }

  test("malformed bytes fail with the byte offset inside the record") {
    val s = schema("a" -> ArrayType(LongType), "f" -> ArrayType(FloatType),
      "s" -> ArrayType(StringType))
    /** A record with one feature `name` whose Feature is `feature`: the Feature's offset. */
    def withFeature(name: String, feature: Array[Byte]): (Array[Byte], Int) = {
      val record = example(entry(name, feature))
      (record, record.length - feature.length)
    }
    def check(record: Array[Byte], what: String, at: Int): Unit =
      assertEquals(failure(s, record).text, malformed(what, at), toHex(record))

    check(hex("0a"), "varint runs past its message", 1)
    check(hex("0a 05 0a 01"), "length 5 runs past its message", 1)
    check(cat(hex("0a"), varint(-1L)), "length -1 runs past its message", 1)
    check(hex("0a 00 16 00"), "invalid wire type 6", 3)
    check(hex("0a 00 17 00"), "invalid wire type 7", 3)
    check(hex("0a 00 0c"), "invalid wire type 4", 3)
    check(hex("0a 00 09 00 00 00"), "8-byte field runs past its message", 3)
    check(hex("0a 04 0a 02 0a 05"), "length 5 runs past its message", 5) // the entry's key
    check(cat(hex("0a 00"), key(5, 3), varintField(1, 1)), "varint runs past its message", 5)

    // Inside a Feature at `at`: the list's tag at `at`, its length, the value's tag at `at + 2`,
    // and what follows it (a length, or the value) at `at + 3`.
    val (wrongType, wrongTypeAt) = withFeature("a", varintField(3, 5L))
    check(wrongType, "Feature field 3 has wire type 0", wrongTypeAt)
    val (oddFloats, oddFloatsAt) = withFeature("f", floatList(field(1, hex("00 00 80 3f 00"))))
    check(oddFloats, "packed float run of 5 bytes", oddFloatsAt + 3)
    val (cutInt, cutIntAt) = withFeature("a", int64List(field(1, hex("01 80"))))
    check(cutInt, "packed int64 run ends inside a varint", cutIntAt + 5)
    val (cutFloat, cutFloatAt) = withFeature("f", floatList(hex("0d 00 00")))
    check(cutFloat, "float runs past its list", cutFloatAt + 3)
    val (intBytes, intBytesAt) = withFeature("s", bytesList(varintField(1, 1L)))
    check(intBytes, "bytes_list value with wire type 0", intBytesAt + 3)
    val (fixedInt, fixedIntAt) = withFeature("a", int64List(fixed32Field(1, 1)))
    check(fixedInt, "int64_list value with wire type 5", fixedIntAt + 3)
    val (eleven, elevenAt) =
      withFeature("a", int64List(field(1, Array.fill[Byte](10)(-1), hex("01"))))
    check(eleven, "varint longer than 10 bytes", elevenAt + 4 + 10)
    // The same run under each fast-path reader of int64 values: each gives the record up, and the
    // general path names the error.
    for (t <- Seq(LongType, ArrayType(IntegerType), ArrayType(ShortType), ArrayType(ByteType))) {
      assertEquals(failure(schema("a" -> t), eleven).text,
        malformed("varint longer than 10 bytes", elevenAt + 4 + 10), t.simpleString)
    }
    // A scalar's run cut inside a varint, at the very end of the record's buffer.
    val (cutScalar, cutScalarAt) = withFeature("a", int64List(field(1, hex("80"))))
    assertEquals(failure(schema("a" -> LongType), cutScalar).text,
      malformed("packed int64 run ends inside a varint", cutScalarAt + 4))
    val (elevenSingle, elevenSingleAt) =
      withFeature("a", int64List(key(1, 0), Array.fill[Byte](10)(-1), hex("01")))
    check(elevenSingle, "varint longer than 10 bytes", elevenSingleAt + 3 + 10)
    val (openGroup, _) = withFeature("a", cat(key(9, 3), int64List(packedInt64(1L))))
    check(openGroup, "varint runs past its message", openGroup.length)

    val e = failure(s, hex("0a"))
    assert(e.getCause.isInstanceOf[WireFormatException])
    assertEquals(failure(schema("t" -> ArrayType(ArrayType(LongType))), hex("12 03 0a"),
      RecordType.SequenceExample).text,
      malformed("length 3 runs past its message", 1, "tf.train.SequenceExample"))
  }

  test("one deserializer per file: each record's error names the offset it came with") {
    val d = deserializer(schema("a" -> LongType), RecordType.Example)
    val good = example(entry("a", int64List(packedInt64(1L))))
    val twoValues = example(entry("a", int64List(packedInt64(2L, 3L))))
    val malformed = hex("0a 05")
    def error(record: Array[Byte], offset: Long): (String, Long, String) = {
      val e = intercept[TFRecordDataException](decode(d, record, offset))
      (e.path, e.offset, e.getMessage.substring(e.getMessage.lastIndexOf(", in the record")))
    }
    assertEquals(error(twoValues, 17L),
      ("test.tfrecord", 17L, ", in the record at byte offset 17 of test.tfrecord"))
    assertEquals(decode(d, good, 40L).getLong(0), 1L)
    assertEquals(error(malformed, 80L),
      ("test.tfrecord", 80L, ", in the record at byte offset 80 of test.tfrecord"))
    assertEquals(error(twoValues, 1L << 40), ("test.tfrecord", 1L << 40,
      s", in the record at byte offset ${1L << 40} of test.tfrecord"))
  }

  test("values that do not fit their column fail naming the column and its type") {
    def message(t: DataType, feature: Array[Byte]): String =
      failure(schema("c" -> t), example(entry("c", feature))).text
    val suffix = ", in the record at byte offset 1000 of test.tfrecord"
    assertEquals(message(IntegerType, int64List(packedInt64(1L << 31))),
      s"Column 'c' (int) cannot hold the value 2147483648$suffix")
    assertEquals(message(ArrayType(ShortType), int64List(packedInt64(1L, -32769L))),
      s"Column 'c' (array<smallint>) cannot hold the value -32769$suffix")
    assertEquals(message(ByteType, int64List(packedInt64(128L))),
      s"Column 'c' (tinyint) cannot hold the value 128$suffix")
    assertEquals(message(BooleanType, int64List(packedInt64(2L))),
      s"Column 'c' (boolean) cannot hold the value 2 (a boolean is stored as 0 or 1)$suffix")
    assertEquals(message(DecimalType(5, 2), floatList(packedFloat(Float.NaN))),
      s"Column 'c' (decimal(5,2)) cannot hold the value NaN$suffix")
    assert(message(DecimalType(3, 1), int64List(packedInt64(100L)))
      .startsWith("Column 'c' (decimal(3,1)) cannot hold the value 100"))
    assertEquals(message(LongType, int64List(packedInt64(1L, 2L))),
      s"Column 'c' (bigint) is a scalar but the feature holds 2 values; read it as " +
        s"array<bigint> to get them all$suffix")
  }

  test("SequenceExample: feature lists into array<array<…>>, context features into the rest") {
    // tf.train.SequenceExample(context={"c": [0.5]}, feature_lists={"t": [[1, 2], []]}), by TF.
    val bytes = hex("0a 0f 0a 0d 0a 01 63 12 08 12 06 0a 04 00 00 00 3f 12 13 0a 11 0a 01 74 " +
      "12 0c 0a 06 1a 04 0a 02 01 02 0a 02 1a 00")
    val row = readSequence(schema("c" -> FloatType, "t" -> ArrayType(ArrayType(LongType))), bytes)
    assertEquals(row.getFloat(0), 0.5f)
    assertEquals(nestedLongs(row, 1), Seq(Seq(1L, 2L), Seq.empty[Long]))

    val s = schema("t" -> ArrayType(ArrayType(LongType)), "f" -> ArrayType(ArrayType(DoubleType)),
      "w" -> ArrayType(ArrayType(StringType)), "none" -> ArrayType(ArrayType(LongType)),
      "empty" -> ArrayType(ArrayType(LongType)), "ctx" -> ArrayType(StringType))
    val unknown = varintField(7, 1L)
    val record = cat(unknown,
      sequenceExample(
        Seq(entry("ctx", bytesList(bytesValues("p", "q")))),
        Seq(entry("t",
          cat(unknown, steps(int64List(packedInt64(1L))), unknown,
            steps(cat(floatList(packedFloat(9f)), int64List(unpackedInt64(2L, 3L))), Array.empty,
              int64List(packedInt64(-1L))))),
          entry("f", steps(floatList(packedFloat(0.5f)), int64List(packedInt64(2L)))),
          entry("w", steps(bytesList(bytesValues("a", "b")), bytesList())),
          entry("empty", Array.empty))), unknown)
    val r = readSequence(s, record)
    assertEquals(nestedLongs(r, 0), Seq(Seq(1L), Seq(2L, 3L), Seq.empty[Long], Seq(-1L)))
    val f = r.getArray(1)
    assertEquals((0 until f.numElements()).map(f.getArray(_).toDoubleArray.toSeq),
      Seq(Seq(0.5), Seq(2.0)))
    val w = r.getArray(2)
    assertEquals((0 until w.numElements()).map(i =>
        (0 until w.getArray(i).numElements())
          .map(w.getArray(i).getUTF8String(_).toString)), Seq(Seq("a", "b"), Seq.empty[String]))
    assert(r.isNullAt(3))
    assertEquals(r.getArray(4).numElements(), 0)
    assertEquals(strings(r, 5), Seq("p", "q"))
  }

  test("SequenceExample: a feature list and a single feature are not interchangeable") {
    val nested = schema("t" -> ArrayType(ArrayType(LongType)))
    val fromContext = failure(nested,
      sequenceExample(Seq(entry("t", int64List(packedInt64(1L)))), Nil),
      RecordType.SequenceExample)
    assertEquals(fromContext.text,
      "Column 't' (array<array<bigint>>) is read from a " +
        "SequenceExample feature list, but the record has a single feature of that name (context " +
        "or Example feature): read it as array<bigint>, in the record at byte offset 1000 of " +
        "test.tfrecord")
    val flat = schema("t" -> ArrayType(LongType))
    val fromList = failure(flat,
      sequenceExample(Nil, Seq(entry("t", steps(int64List(packedInt64(1L)))))),
      RecordType.SequenceExample)
    assertEquals(fromList.text,
      "Column 't' (array<bigint>) is read from a single " +
        "feature, but the record has a feature list of that name: read it as " +
        "array<array<bigint>>, in the record at byte offset 1000 of test.tfrecord")
    val wrongKind = failure(nested,
      sequenceExample(Nil, Seq(entry("t", steps(int64List(), bytesList(bytesValues("x")))))),
      RecordType.SequenceExample)
    assertEquals(wrongKind.text,
      "Column 't' (array<array<bigint>>) cannot be read from a " +
        "bytes_list feature, in the record at byte offset 1000 of test.tfrecord")
    // A repeated feature list key: the last wins.
    val row = readSequence(nested,
      sequenceExample(Nil,
        Seq(
          entry("t", steps(int64List(packedInt64(1L)))),
          entry("t",
            steps(int64List(packedInt64(2L),
              unpackedInt64(3L)))))))
    assertEquals(nestedLongs(row, 0), Seq(Seq(2L, 3L)))
  }

  test("the corrupt-record column holds the record's bytes and is never read from a feature") {
    val s = schema("a" -> LongType, "_corrupt_record" -> BinaryType)
    val d = new ExampleDeserializer(s, RecordType.Example, "test.tfrecord", 1, null, fastPath)
    val record = example(entry("a", int64List(packedInt64(1L))),
      entry("_corrupt_record", bytesList(bytesValues("from a feature"))))
    val row = decode(d, record, Offset)
    assertEquals(row.getLong(0), 1L)
    assert(row.isNullAt(1))
    val bad = cat(hex("0a 05"), record)
    val corrupt = d.corruptRow(bad, 0, bad.length - 1, Offset)
    assert(corrupt.isNullAt(0))
    assertEquals(corrupt.getBinary(1).toSeq, bad.dropRight(1).toSeq)
  }

  private val vector: DataType = new org.apache.spark.ml.linalg.VectorUDT

  /** A vector column's struct (VectorUDT's storage): type, size, indices, values. */
  private def vectorOf(row: UnsafeRow, i: Int): (Byte, Int, Seq[Int], Seq[Double]) = {
    val v = row.getStruct(i, 4)
    (v.getByte(0), if (v.isNullAt(1)) -1 else v.getInt(1),
      if (v.isNullAt(2)) Nil else v.getArray(2).toIntArray.toSeq, v.getArray(3).toDoubleArray.toSeq)
  }

  private def int64s(values: Long*): Array[Byte] =
    int64List(if (values.isEmpty) Array.emptyByteArray else packedInt64(values: _*))
  private def float32s(values: Float*): Array[Byte] =
    floatList(if (values.isEmpty) Array.emptyByteArray else packedFloat(values: _*))

  test("a vector column reads its sparse features, in any order, into a SparseVector") {
    val s = schema("id" -> LongType, "v" -> vector, "w" -> vector)
    val row = read(s,
      example(
        entry("v/size", int64s(1L << 20)),
        entry("id", int64s(9L)),
        entry("v/values", float32s(0.5f, 0f, -2f)),
        entry("w", float32s(1f, 0f)), // today's dense layout, beside it
        entry("v/indices", int64s(3L, 70000L, 1048575L))))
    assertEquals(row.getLong(0), 9L)
    assertEquals(vectorOf(row, 1), (0.toByte, 1 << 20, Seq(3, 70000, 1048575), Seq(0.5, 0.0, -2.0)))
    assertEquals(vectorOf(row, 2), (1.toByte, -1, Nil, Seq(1.0, 0.0)))
    // An empty vector, and the next record's vector absent: null.
    val empty = read(s,
      example(entry("v/indices", int64s()), entry("v/values", float32s()),
        entry("v/size", int64s(4L))))
    assertEquals(vectorOf(empty, 1), (0.toByte, 4, Nil, Nil))
    assert(empty.isNullAt(2))
    val d = deserializer(s, RecordType.Example)
    decode(d,
      example(entry("v/indices", int64s(1L)), entry("v/values", float32s(1f)),
        entry("v/size", int64s(2L))), Offset)
    val next = decode(d, example(entry("id", int64s(1L))), Offset)
    assert(next.isNullAt(1))
    // Unpacked lists read the same (the general path's).
    val unpacked = read(s,
      example(entry("v/indices", int64List(unpackedInt64(0L, 2L))),
        entry("v/values", floatList(unpackedFloat(1f, 2f))), entry("v/size", int64s(3L))))
    assertEquals(vectorOf(unpacked, 1), (0.toByte, 3, Seq(0, 2), Seq(1.0, 2.0)))
  }

  test("a vector's sparse features that do not make a vector fail naming the column") {
    val s = schema("v" -> vector)
    val prefix = "Column 'v' (vector) "
    def fails(entries: Array[Byte]*): String = {
      val e = failure(s, example(entries: _*))
      assertEquals(e.column, "v")
      e.text
    }
    val at = ", in the record at byte offset 1000 of test.tfrecord"
    assertEquals(fails(entry("v/indices", int64s(1L)), entry("v/values", float32s(1f))),
      prefix + "is read from the sparse features 'v/indices', 'v/values' and 'v/size', but " +
        "the record has no 'v/size' (its size, written with vectorLayout sparse)" + at)
    assertEquals(fails(entry("v/indices", int64s(1L)), entry("v/size", int64s(3L))),
      prefix + "is read from the sparse features 'v/indices', 'v/values' and 'v/size', but " +
        "the record has no 'v/values' (written with vectorLayout sparse)" + at)
    assertEquals(fails(entry("v/indices", int64s(2L, 1L)), entry("v/values", float32s(1f, 2f)),
      entry("v/size", int64s(3L))),
      prefix + "has the index 1 after 2 in 'v/indices': indices must be increasing" + at)
    assertEquals(fails(entry("v/indices", int64s(1L, 1L)), entry("v/values", float32s(1f, 2f)),
      entry("v/size", int64s(3L))),
      prefix + "has the index 1 after 1 in 'v/indices': indices must be increasing" + at)
    assertEquals(fails(entry("v/indices", int64s(3L)), entry("v/values", float32s(1f)),
      entry("v/size", int64s(3L))),
      prefix + "has the index 3 in 'v/indices', outside the vector's size 3" + at)
    assertEquals(fails(entry("v/indices", int64s(-1L)), entry("v/values", float32s(1f)),
      entry("v/size", int64s(3L))),
      prefix + "has the index -1 in 'v/indices', outside the vector's size 3" + at)
    assertEquals(fails(entry("v/indices", int64s(0L, 1L)), entry("v/values", float32s(1f)),
      entry("v/size", int64s(3L))),
      prefix + "has 2 indices in 'v/indices' but 1 values in 'v/values': they must be as " +
        "many" + at)
    assertEquals(fails(entry("v/indices", int64s()), entry("v/values", float32s()),
      entry("v/size", int64s(3L, 4L))),
      prefix + "needs one value in 'v/size', the vector's size, but it holds 2" + at)
    assertEquals(fails(entry("v/indices", int64s()), entry("v/values", float32s()),
      entry("v/size", int64s(1L << 31))),
      prefix + "has the size 2147483648 in 'v/size': a vector's size is from 0 to " +
        "2147483647" + at)
    assertEquals(fails(entry("v/indices", float32s(1f)), entry("v/values", float32s(1f)),
      entry("v/size", int64s(3L))),
      prefix + "cannot be read from its float_list feature 'v/indices': it must be " +
        "int64_list" + at)
    assertEquals(fails(entry("v", float32s(1f)), entry("v/indices", int64s(0L)),
      entry("v/values", float32s(1f)), entry("v/size", int64s(3L))),
      prefix + "has both the dense feature 'v' and the sparse features 'v/indices', " +
        "'v/values'" + at)
  }

  private def nested3(row: UnsafeRow, i: Int): Seq[Seq[Seq[Int]]] = {
    val a = row.getArray(i)
    (0 until a.numElements()).map { j =>
      val b = a.getArray(j)
      (0 until b.numElements()).map(k =>
        b.getArray(k).toFloatArray.map(java.lang.Float.floatToRawIntBits).toSeq)
    }
  }

  private def bits(fs: Float*): Seq[Int] = fs.map(java.lang.Float.floatToRawIntBits)

  test("Example: a list of lists reads its ragged features, in any order, exactly") {
    val s = schema("id" -> LongType, "x" -> ArrayType(ArrayType(LongType)),
      "y" -> ArrayType(ArrayType(ArrayType(FloatType))),
      "s" -> ArrayType(ArrayType(BinaryType)))
    val nan = java.lang.Float.intBitsToFloat(0x7fc00001)
    val row = read(s,
      example(
        entry("x/ragged_flat_values", int64s(Long.MinValue, Long.MaxValue, -1L)),
        entry("y/ragged_row_lengths_1", int64s(1L, 0L, 2L)),
        entry("id", int64s(5L)),
        entry("y/ragged_flat_values", float32s(nan, -0.0f, 1.5f)),
        entry("x/ragged_row_lengths_0", int64s(2L, 0L, 1L)),
        entry("y/ragged_row_lengths_0", int64s(2L, 0L, 1L)),
        entry("s/ragged_row_lengths_0", int64s(0L, 2L)),
        entry("s/ragged_flat_values", bytesList(field(1, Array[Byte](-1, 0)), field(1)))))
    assertEquals(row.getLong(0), 5L)
    assertEquals(nestedLongs(row, 1), Seq(Seq(Long.MinValue, Long.MaxValue), Seq(), Seq(-1L)))
    assertEquals(nested3(row, 2),
      Seq(Seq(bits(nan), Seq()), Seq(), Seq(bits(-0.0f, 1.5f))))
    val bs = row.getArray(3)
    assertEquals((0 until bs.numElements()).map(j =>
        bs.getArray(j).toObjectArray(BinaryType).toSeq.map(_.asInstanceOf[Array[Byte]].toSeq)),
      Seq(Seq(), Seq(Seq[Byte](-1, 0), Seq[Byte]())))
    // Empty features: an empty outer list; no features: null; unpacked lists read the same.
    val d = deserializer(s, RecordType.Example)
    val empty = decode(d,
      example(entry("x/ragged_row_lengths_0", int64s()),
        entry("x/ragged_flat_values", int64s())), Offset)
    assertEquals(nestedLongs(empty, 1), Seq())
    assert(empty.isNullAt(0) && empty.isNullAt(2) && empty.isNullAt(3))
    val unpacked = decode(d,
      example(
        entry("x/ragged_row_lengths_0", int64List(unpackedInt64(0L, 1L))),
        entry("x/ragged_flat_values", int64List(unpackedInt64(300L)))), Offset)
    assertEquals(nestedLongs(unpacked, 1), Seq(Seq(), Seq(300L)))
    assert(decode(d, example(entry("id", int64s(1L))), Offset).isNullAt(1))
    // int64 values into a float column and string column, as for plain lists.
    val converted = read(schema("f" -> ArrayType(ArrayType(DoubleType)),
      "t" -> ArrayType(ArrayType(StringType))),
      example(entry("f/ragged_row_lengths_0", int64s(1L)),
        entry("f/ragged_flat_values",
          int64s(3L)), entry("t/ragged_row_lengths_0", int64s(1L)),
        entry("t/ragged_flat_values", bytesList(bytesValues("h\u00e9")))))
    assertEquals(converted.getArray(0).getArray(0).getDouble(0), 3.0)
    assertEquals(converted.getArray(1).getArray(0).getUTF8String(0).toString, "h\u00e9")
  }

  test("Example: ragged features that do not make lists of lists fail naming the column") {
    val s = schema("x" -> ArrayType(ArrayType(LongType)),
      "y" -> ArrayType(ArrayType(ArrayType(IntegerType))))
    def fails(entries: Array[Byte]*): String = {
      val e = failure(s, example(entries: _*))
      assert(e.column == "x" || e.column == "y", e.column)
      e.text
    }
    val at = ", in the record at byte offset 1000 of test.tfrecord"
    val x = "Column 'x' (array<array<bigint>>) "
    val y = "Column 'y' (array<array<array<int>>>) "
    assertEquals(fails(entry("x/ragged_flat_values", int64s(1L))),
      x + "is read from the ragged features 'x/ragged_row_lengths_0', 'x/ragged_flat_values', " +
        "but the record has no 'x/ragged_row_lengths_0'" + at)
    assertEquals(fails(entry("x/ragged_row_lengths_0", int64s(0L))),
      x + "is read from the ragged features 'x/ragged_row_lengths_0', 'x/ragged_flat_values', " +
        "but the record has no 'x/ragged_flat_values'" + at)
    assertEquals(fails(entry("x/ragged_row_lengths_0", int64s(1L, 1L)),
      entry("x/ragged_flat_values", int64s(1L))),
      x + "has row lengths in 'x/ragged_row_lengths_0' that add up to 2, but " +
        "'x/ragged_flat_values' holds 1 values" + at)
    assertEquals(fails(entry("x/ragged_row_lengths_0", int64s(2L, -1L)),
      entry("x/ragged_flat_values", int64s(1L))),
      x + "has the negative row length -1 in 'x/ragged_row_lengths_0'" + at)
    assertEquals(fails(entry("y/ragged_row_lengths_0", int64s(3L)),
      entry("y/ragged_row_lengths_1", int64s(1L, 0L)), entry("y/ragged_flat_values", int64s(1L))),
      y + "has row lengths in 'y/ragged_row_lengths_0' that add up to 3, but " +
        "'y/ragged_row_lengths_1' holds 2 row lengths" + at)
    assertEquals(fails(entry("y/ragged_row_lengths_0", int64s(1L)),
      entry("y/ragged_flat_values", int64s(1L))),
      y + "is read from the ragged features 'y/ragged_row_lengths_0', " +
        "'y/ragged_row_lengths_1', 'y/ragged_flat_values', but the record has no " +
        "'y/ragged_row_lengths_1'" + at)
    assertEquals(fails(entry("x/ragged_row_lengths_0", float32s(1f)),
      entry("x/ragged_flat_values", int64s(1L))),
      x + "cannot be read from its float_list feature 'x/ragged_row_lengths_0': row lengths " +
        "are int64" + at)
    assertEquals(fails(entry("x/ragged_row_lengths_0", int64s(1L)),
      entry("x/ragged_flat_values", float32s(1f))),
      x + "cannot be read from its float_list feature 'x/ragged_flat_values'" + at)
    assertEquals(fails(entry("y/ragged_row_lengths_0", int64s(1L)),
      entry("y/ragged_row_lengths_1", int64s(1L)),
      entry("y/ragged_flat_values",
        int64s(1L << 40))),
      y + "cannot hold the value 1099511627776" + at)
    assertEquals(fails(entry("x", int64s(1L))),
      x + "is read from the ragged features 'x/ragged_row_lengths_0', " +
        "'x/ragged_flat_values', but the record has a single feature of the column's own " +
        "name" + at)
  }
}
