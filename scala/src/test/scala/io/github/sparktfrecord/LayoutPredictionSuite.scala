package io.github.sparktfrecord

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.{ExampleDeserializer, RecordType}

/**
 * The fast path's layout prediction (each map entry found where the previous records had it, and
 * a projection checking the entries it does not want without reading them) against the general
 * path (`decoder` = `interpreted`): records of one writer, with lists of varying lengths, keys
 * short, long and of one byte, lengths of one and two bytes; records whose keys are shuffled,
 * missing or extra; and a predicted record damaged at every offset. Each gives the same row, or
 * the same error, as the general path.
 */
class LayoutPredictionSuite extends UnitSuite {
  import ExampleRecords._
  import ProtoBytes._

  private val schema = StructType.fromDDL(
    "id bigint, label int, f0 float, emb array<float>, ids array<bigint>, s string, " +
      "a_feature_name_longer_than_sixteen_bytes string, tags array<string>, d double")

  /** Records of one writer; lists of varying length (32 floats or more: two-byte lengths). */
  private def written(r: Random, n: Int): Array[Array[Byte]] =
    serialized(schema,
      (0 until n).map { i =>
        InternalRow(r.nextLong() >> r.nextInt(64), r.nextInt(), r.nextFloat(),
          new GenericArrayData(Array.fill[Any](r.nextInt(3) * 20)(r.nextFloat())),
          new GenericArrayData(Array.fill[Any](r.nextInt(30))(r.nextLong() >> r.nextInt(64))),
          if (i % 9 == 0) null else UTF8String.fromString("x" * r.nextInt(140)),
          UTF8String.fromString(s"v$i"),
          new GenericArrayData(Array.fill[Any](r.nextInt(4))(UTF8String.fromString("t"))),
          r.nextDouble())
      })

  private val wideSchema = StructType((0 until 100).map(i =>
    StructField(f"w$i%04d", if (i % 2 == 0) FloatType else LongType)))
  private val ten = StructType(wideSchema.fields.indices.filter(_ % 10 == 3).map(wideSchema(_)))

  private def wide(r: Random, n: Int): Array[Array[Byte]] =
    serialized(wideSchema,
      (0 until n).map { _ =>
        InternalRow((0 until 100).map(i =>
          if (i % 2 == 0) r.nextFloat(): Any else (r.nextLong() >> r.nextInt(64)): Any): _*)
      })

  /** The row's values, floats by their bits. */
  private def values(row: UnsafeRow, schema: StructType): Seq[Any] =
    schema.fields.indices.map { i =>
      if (row.isNullAt(i)) null
      else schema(i).dataType match {
        case ArrayType(e, _) =>
          val a = row.getArray(i)
          (0 until a.numElements()).map(j => if (a.isNullAt(j)) null else value(a.get(j, e)))
        case t => value(row.get(i, t))
      }
    }

  private def value(v: Any): Any = v match {
    case f: Float => java.lang.Float.floatToRawIntBits(f)
    case d: Double => java.lang.Double.doubleToRawLongBits(d)
    case b: Array[Byte] => b.toSeq
    case other => other.toString
  }

  private case class Failed(condition: String, column: String, offset: Long, message: String)

  /** The row's values and its bytes (which Spark hashes and compares rows by), or the failure. */
  private def outcome(d: ExampleDeserializer, rec: Array[Byte], schema: StructType): Any =
    try {
      val row = d.decode(rec, 0, rec.length, 77L)
      (values(row, schema), toHex(row.getBytes))
    } catch {
      case e: TFRecordDataException => Failed(e.condition, e.column, e.offset, e.getMessage)
    }

  private def general(s: StructType) =
    new ExampleDeserializer(s, RecordType.Example, "p.tfrecord", fastPath = false)
  private def fast(s: StructType) = new ExampleDeserializer(s, RecordType.Example, "p.tfrecord")

  /** Both paths over `recs` in turn, one deserializer each: the same outcome for each record. */
  private def assertSame(s: StructType, recs: Seq[Array[Byte]]): ExampleDeserializer = {
    val (g, f) = (general(s), fast(s))
    for ((rec, i) <- recs.zipWithIndex) {
      assertEquals(outcome(f, rec, s), outcome(g, rec, s), s"record $i: ${toHex(rec)}")
    }
    f
  }

  test("records of one writer are predicted and read as the general path reads them") {
    val f = assertSame(schema, written(new Random(1), 1000).toSeq)
    assert(f.triesFastPath && f.predictsLayout)
    val w = assertSame(wideSchema, wide(new Random(2), 200).toSeq)
    assert(w.predictsLayout)
  }

  test("a projection of 10 of 100 features reads what the general path reads") {
    val f = assertSame(ten, wide(new Random(3), 500).toSeq)
    assert(f.triesFastPath && f.predictsLayout)
  }

  test("records whose keys are shuffled, missing or extra now and then read the same") {
    val r = new Random(4)
    val extra = entry("extra", int64List(packedInt64(5L)))
    val recs = written(r, 600).map { rec =>
      val es = entries(rec)
      r.nextInt(24) match { // one record in six differs
        case 0 => example(r.shuffle(es): _*)
        case 1 => example(es.patch(r.nextInt(es.size), Nil, 1): _*) // one missing
        case 2 => example(es.patch(r.nextInt(es.size + 1), Seq(extra), 0): _*)
        case 3 => example(es ++ es.take(1): _*) // a key repeated: its last entry wins
        case _ => rec
      }
    }
    val f = assertSame(schema, recs.toSeq)
    assert(f.predictsLayout)
    assertSame(ten, wide(r, 300).map(rec => example(r.shuffle(entries(rec)): _*)).toSeq)
  }

  test("a file whose keys keep changing order stops predicting, and reads the same") {
    val r = new Random(5)
    val recs = written(r, 1000).map(rec => example(r.shuffle(entries(rec)): _*))
    val f = assertSame(schema, recs.toSeq)
    assert(f.triesFastPath)
    assert(!f.predictsLayout)
  }

  /**
   * Each byte of `rec` replaced by a few values in turn, read by a fast deserializer that
   * predicted the records before it, and by the general path.
   */
  private def assertDamageReadsTheSame(s: StructType, before: Seq[Array[Byte]],
      rec: Array[Byte]): Unit = {
    val g = general(s)
    var compared = 0
    var failures = 0
    for (at <- rec.indices) {
      val b = rec(at)
      val replacements = Seq(b ^ 1, b ^ 0x40, b ^ 0x80, 0, 0x0a, 0x12, 0x30, 0x33, 0x7f, 0xff)
      for (v <- replacements.map(_.toByte).distinct if v != b) {
        val damaged = rec.clone()
        damaged(at) = v
        val f = fast(s)
        before.foreach(x => f.decode(x, 0, x.length, 0L))
        assert(f.predictsLayout)
        val expected = outcome(g, damaged, s)
        assertEquals(outcome(f, damaged, s), expected, s"byte $at set to $v: ${toHex(damaged)}")
        compared += 1
        if (expected.isInstanceOf[Failed]) failures += 1
      }
    }
    // Both outcomes occur, so the comparison means something.
    assert(failures > 0 && failures < compared, s"$failures of $compared")
  }

  test("a predicted record damaged at any byte reads as the general path reads it") {
    val recs = written(new Random(6), 4)
    assertDamageReadsTheSame(schema, recs.take(3).toSeq, recs(3))
  }

  /**
   * Keys of 1 to 12 bytes (headers of 7 to 18 bytes: short ones, passed in two words, and longer
   * ones) for floats, bigints and strings. With `constant`, every value has the same length, so
   * that unwanted entries' headers are learned whole; without, the lengths vary (varints of 1 to
   * 10 bytes, strings of 0 to 40 bytes, now and then a null: an unset Feature).
   */
  private val shortKeys = StructType((1 to 12).flatMap(k =>
    Seq(
      StructField("f" * k, FloatType), StructField("l" * k, LongType),
      StructField("s" * k, StringType))))
  private val someShortKeys =
    StructType(Seq("fff", "l" * 9, "ssssss", "l" * 12, "ff").map(shortKeys(_)))

  private def shortKeyed(r: Random, n: Int, constant: Boolean): Array[Array[Byte]] =
    serialized(shortKeys,
      (0 until n).map { _ =>
        InternalRow((1 to 12).flatMap(_ =>
          Seq[Any](r.nextFloat(),
            if (constant) (1L << 28) + r.nextInt(1 << 28) else r.nextLong() >> r.nextInt(64),
            if (!constant && r.nextInt(20) == 0) null
            else UTF8String.fromString("v" * (if (constant) 4 else r.nextInt(41)))
          )): _*)
      })

  test("a projection passes short headers whole, then with lengths that vary, as the walk would") {
    val r = new Random(8)
    val constant = shortKeyed(r, 40, constant = true).toSeq
    val varying = shortKeyed(r, 200, constant = false).toSeq
    val f = assertSame(someShortKeys, constant ++ varying ++ constant)
    assert(f.predictsLayout)
    // Damage passed by headers learned whole, and by those whose lengths were seen to vary.
    assertDamageReadsTheSame(someShortKeys, constant.take(3), constant(3))
    assertDamageReadsTheSame(someShortKeys, constant ++ varying.take(20), constant(5))
  }

  test("a projection's record damaged at any byte, wanted entry or not, reads the same") {
    // Same-length damage to an unwanted entry (its tags, lengths, or its key turned into a wanted
    // name) must not pass unseen: the walk would give up on it or read it.
    val recs = wide(new Random(7), 4)
    assertDamageReadsTheSame(ten, recs.take(3).toSeq, recs(3))
  }
}
