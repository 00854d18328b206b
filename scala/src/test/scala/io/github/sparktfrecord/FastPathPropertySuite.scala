package io.github.sparktfrecord

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.{ExampleDeserializer, RecordType, RowDecoder}
import io.github.sparktfrecord.wire.ProtoWire

/**
 * The fast path against the general path on random schemas (every type the fast path reads,
 * and a few it leaves to the general path; scalars and arrays; names short, long and
 * not ASCII) and random records: usual and unusual layouts (longer length prefixes, value before
 * key, unknown fields, unpacked values, several lists, a kind switch, repeated keys, empty and
 * unset features, wrong kinds, values out of range, damaged bytes). Both give the same row, or
 * fail with the same condition, column, offset and message.
 */
class FastPathPropertySuite extends UnitSuite {
  import ProtoBytes._

  private val types: Seq[DataType] = Seq(LongType, IntegerType, ShortType, ByteType, BooleanType,
    DateType, TimestampType, FloatType, DoubleType, StringType, BinaryType, DecimalType(10, 2))

  private def name(r: Random, i: Int): String = r.nextInt(5) match {
    case 0 => s"f$i"
    case 1 => s"feature_$i" // longer than 8 bytes
    case 2 => s"\u00e9t\u00e9$i" // UTF-8, up to 8 bytes
    case 3 => s"image/object/bbox/\u6f22$i" // long, not ASCII
    case _ => s"c${i}x"
  }

  private def randomSchema(r: Random): StructType =
    StructType((0 until 1 + r.nextInt(10)).map { i =>
      val t = types(r.nextInt(types.size))
      StructField(name(r, i), if (r.nextBoolean()) ArrayType(t) else t)
    })

  /** A length prefix, sometimes longer than needed (still valid protobuf). */
  private def length(r: Random, n: Int): Array[Byte] =
    if (r.nextInt(8) != 0) varint(n)
    else {
      val v = varint(n)
      v(v.length - 1) = (v(v.length - 1) | 0x80).toByte
      cat(v, Array.fill[Byte](r.nextInt(2))(0x80.toByte), Array[Byte](0))
    }

  private def delimited(r: Random, field: Int, content: Array[Byte]): Array[Byte] =
    cat(key(field, 2), length(r, content.length), content)

  /** A value for an int64 column of type `t`; now and then one it cannot hold. */
  private def int64Value(r: Random, t: DataType): Long =
    if (r.nextInt(40) == 0) r.nextLong() >> r.nextInt(64)
    else t match {
      case BooleanType => r.nextInt(2).toLong
      case ByteType => r.nextInt(256).toLong - 128
      case ShortType => r.nextInt(65536).toLong - 32768
      case IntegerType | DateType => r.nextInt().toLong
      case _ => r.nextLong() >> r.nextInt(64)
    }

  /** A list message's content: the values of `kind`, packed or not, maybe in pieces. */
  private def listContent(r: Random, kind: Int, n: Int, t: DataType): Array[Byte] = {
    val packed = r.nextInt(5) != 0
    kind match {
      case ProtoWire.KindInt64 =>
        val vs = Seq.fill(n)(int64Value(r, t))
        if (packed) delimited(r, 1, cat(vs.map(varint): _*)) else unpackedInt64(vs: _*)
      case ProtoWire.KindFloat =>
        val vs = Seq.fill(n)(if (r.nextInt(10) == 0) Float.NaN else r.nextFloat() * 100 - 50)
        if (packed) {
          delimited(r, 1, cat(vs.map(v => le32(java.lang.Float.floatToRawIntBits(v))): _*))
        } else unpackedFloat(vs: _*)
      case _ =>
        cat(Seq.fill(n)(delimited(r, 1,
          utf8(Seq("", "a", "h\u00e9llo", "x" * 130)(r.nextInt(4))))): _*)
    }
  }

  private def expectedKind(t: DataType): Int = t match {
    case ArrayType(e, _) => expectedKind(e)
    case StringType | BinaryType => ProtoWire.KindBytes
    case FloatType | DoubleType => ProtoWire.KindFloat
    case _ => ProtoWire.KindInt64
  }

  /** A Feature message for a column of type `t` (or any, for an unwanted one). */
  private def feature(r: Random, t: DataType): Array[Byte] = {
    val kind =
      if (r.nextInt(30) == 0) 1 + r.nextInt(3) else expectedKind(t)
    val n = t match {
      case _: ArrayType => r.nextInt(6)
      case _ => if (r.nextInt(30) == 0) r.nextInt(3) else 1
    }
    val e = t match { case ArrayType(e, _) => e; case e => e }
    r.nextInt(12) match {
      case 0 => Array.emptyByteArray // unset
      case 1 => // two lists of the kind
        cat(delimited(r, kind, listContent(r, kind, n, e)),
          delimited(r, kind, listContent(r, kind, 1, e)))
      case 2 => // a kind switch: the last kind wins
        val first = 1 + r.nextInt(3)
        cat(delimited(r, first, listContent(r, first, 1, e)),
          delimited(r, kind, listContent(r, kind, n, e)))
      case 3 => cat(delimited(r, kind, listContent(r, kind, n, e)), varintField(9, 1)) // unknown
      case _ => delimited(r, kind, listContent(r, kind, n, e))
    }
  }

  private def entry(r: Random, name: String, value: Array[Byte]): Array[Byte] = {
    val k = delimited(r, 1, utf8(name))
    val v = delimited(r, 2, value)
    r.nextInt(12) match {
      case 0 => delimited(r, 1, cat(v, k)) // value first
      case 1 => delimited(r, 1, cat(k, varintField(5, 3), v)) // an unknown field
      case _ => delimited(r, 1, cat(k, v))
    }
  }

  private def record(r: Random, schema: StructType): Array[Byte] = {
    val wanted = schema.fields.toSeq.filter(_ => r.nextInt(5) != 0)
      .map(f => f.name -> feature(r, f.dataType))
    val unwanted = Seq.fill(r.nextInt(4))(s"other${r.nextInt(20)}" -> feature(r, LongType))
    val repeated = if (wanted.nonEmpty && r.nextInt(8) == 0) Seq(wanted.head._1 ->
      feature(r, schema.fields.head.dataType))
    else Nil
    val entries = (wanted ++ unwanted ++ repeated).map { case (n, f) => entry(r, n, f) }
    // Mostly the same order as the schema, as records of one file have it.
    val ordered = if (r.nextInt(6) == 0) r.shuffle(entries) else entries
    val bytes = r.nextInt(10) match {
      case 0 => cat(delimited(r, 1, cat(ordered.take(2): _*)),
          delimited(r, 1, cat(ordered.drop(2): _*)))
      case 1 => cat(varintField(7, 42), delimited(r, 1, cat(ordered: _*)))
      case _ => delimited(r, 1, cat(ordered: _*))
    }
    if (r.nextInt(15) == 0 && bytes.nonEmpty) { // damaged
      val b = bytes.clone()
      b(r.nextInt(b.length)) = r.nextInt(256).toByte
      b.take(b.length - r.nextInt(3))
    } else bytes
  }

  /** The row's values, floats by their bits. */
  private def values(row: UnsafeRow, schema: StructType): Seq[Any] =
    schema.fields.indices.map { i =>
      if (row.isNullAt(i)) null
      else schema(i).dataType match {
        case ArrayType(e, _) =>
          val a = row.getArray(i)
          (0 until a.numElements()).map(j => if (a.isNullAt(j)) null else value(a.get(j, e), e))
        case t => value(row.get(i, t), t)
      }
    }

  private def value(v: Any, t: DataType): Any = (v, t) match {
    case (f: Float, _) => java.lang.Float.floatToRawIntBits(f)
    case (d: Double, _) => java.lang.Double.doubleToRawLongBits(d)
    case (b: Array[Byte], _) => b.toSeq
    case (other, _) => other.toString
  }

  /**
   * The row's values and its bytes (padding and unused bits included, which Spark hashes and
   * compares rows by), or the failure.
   */
  private def outcome(d: RowDecoder, buf: Array[Byte], start: Int, end: Int, offset: Long,
      schema: StructType): Any =
    try {
      val row = d.decode(buf, start, end, offset)
      (values(row, schema), toHex(row.getBytes))
    } catch {
      case e: TFRecordDataException => Failed(e.condition, e.column, e.offset, e.getMessage)
    }

  private case class Failed(condition: String, column: String, offset: Long, message: String)

  test("the fast path reads what the general path reads, and fails where it fails") {
    val r = new Random(25)
    var compared = 0
    var failures = 0
    for (s <- 0 until 300) {
      val schema = randomSchema(r)
      val general = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord",
        fastPath = false)
      var fast: ExampleDeserializer = null
      for (i <- 0 until 40) {
        // A new one now and then, before the give-up rule could stop it trying the fast path.
        if (i % 12 == 0) fast = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord")
        assert(fast.triesFastPath, schema.simpleString)
        val rec = record(r, schema)
        val start = r.nextInt(5)
        val buf = cat(Array.fill[Byte](start)(10), rec, Array.fill[Byte](r.nextInt(10))(-1))
        val offset = 1000L * i
        val expected = outcome(general, buf, start, start + rec.length, offset, schema)
        val got = outcome(fast, buf, start, start + rec.length, offset, schema)
        assertEquals(got, expected, s"schema ${schema.simpleString}, record ${toHex(rec)}")
        compared += 1
        if (expected.isInstanceOf[Failed]) failures += 1
      }
    }
    // Both outcomes occur often enough for the comparison to mean something.
    assert(failures > compared / 20 && failures < compared / 2, s"$failures of $compared")
  }

  test("a scalar's varint of 1 to 10 bytes, padded, or beside another, reads as the general path") {
    // Each value once as itself, once padded with continuation bytes (still one varint), and
    // once followed by a second varint in the same run; the buffer ends right after the record
    // or eight bytes later, so that the run is read both in one word and byte by byte.
    val values = Seq(0L, 1L, -1L, 127L, 128L, 300L, Long.MinValue, Long.MaxValue,
      Int.MinValue.toLong, Int.MaxValue.toLong) ++
      (1 to 9).flatMap(k => Seq((1L << (7 * k)) - 1, 1L << (7 * k)))
    def padded(v: Long, extra: Int): Array[Byte] = {
      val b = varint(v)
      if (b.length + extra > 10) b
      else {
        val out = b ++ Array.fill[Byte](extra)(0)
        for (i <- 0 until out.length - 1) out(i) = (out(i) | 0x80).toByte
        out
      }
    }
    var compared = 0
    for (t <- Seq(LongType, IntegerType, ShortType, ByteType, BooleanType, TimestampType)) {
      val schema = StructType(Seq(StructField("v", t)))
      val general = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord",
        fastPath = false)
      for (v <- values;
        run <- Seq(varint(v), padded(v, 1), padded(v, 3),
          cat(varint(v), varint(5L)), cat(varint(5L), varint(v)));
        tail <- Seq(0, 8)) {
        val rec = example(ProtoBytes.entry("v", int64List(field(1, run))))
        val buf = cat(rec, Array.fill[Byte](tail)(-1))
        // A new one each time: the give-up rule would stop a file's fast path after many fails.
        val fast = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord")
        assertEquals(outcome(fast, buf, 0, rec.length, 0L, schema),
          outcome(general, buf, 0, rec.length, 0L, schema), s"$t, ${toHex(run)}")
        compared += 1
      }
    }
    assert(compared > 1000)
  }

  test("lists of one-byte, two-byte and three-byte lengths, at the edges, whole or damaged") {
    // A list's head (`listTag L 0A n`) is recognised from its length alone where both lengths
    // are one byte or both two; these sizes cross each edge. Each record is read whole, then
    // with each byte of its Feature's first eight replaced, against the general path.
    val counts = Seq(0, 1, 30, 31, 32, 33, 63, 64, 65, 4092, 4093, 4094, 4095, 4096)
    var compared = 0
    for (t <- Seq(ArrayType(FloatType), ArrayType(DoubleType), ArrayType(LongType), FloatType,
        StringType, ArrayType(StringType));
      count <- counts) {
      val schema = StructType(Seq(StructField("v", t)))
      val feature = t match {
        case ArrayType(FloatType | DoubleType, _) | FloatType =>
          floatList(field(1, Seq.tabulate(count)(i => le32(i * 31 + 7)): _*))
        case ArrayType(LongType, _) => int64List(field(1, Seq.tabulate(count)(i => varint(i)): _*))
        case StringType => bytesList(field(1, Array.fill[Byte](count)(120)))
        case _ => bytesList(field(1, Array.fill[Byte](count)(120)), field(1, utf8("ab")))
      }
      val rec = example(ProtoBytes.entry("v", feature))
      val at = rec.length - feature.length
      val general = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord",
        fastPath = false)
      for (i <- -1 until math.min(8, feature.length);
        v <- if (i < 0) Seq(0)
        else Seq(0, 0x80,
          rec(at + i) ^ 1, rec(at + i) ^ 0x80)) {
        val damaged = rec.clone()
        if (i >= 0) damaged(at + i) = v.toByte
        val fast = new ExampleDeserializer(schema, RecordType.Example, "p.tfrecord")
        assertEquals(outcome(fast, damaged, 0, damaged.length, 0L, schema),
          outcome(general, damaged, 0, damaged.length, 0L, schema),
          s"$t, $count values, byte $i set to $v")
        compared += 1
      }
    }
    assert(compared > 1000)
  }
}
