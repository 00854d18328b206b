package io.github.sparktfrecord

import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.{ExampleDeserializer, RecordType}

/**
 * [[ExampleDeserializerSuite]] with the fast path tried first (what the option `decoder` =
 * `generated`, the default, reads with), and the rule by which a file stops trying it.
 */
class FastPathSuite extends ExampleDeserializerSuite(true) {
  import ProtoBytes._

  private val schema = StructType(Seq(StructField("a", LongType)))
  private val usual = example(entry("a", int64List(packedInt64(7L))))
  private val unusual = example(entry("a", int64List(unpackedInt64(7L))))

  private def read(d: ExampleDeserializer, record: Array[Byte]): Long =
    d.decode(record, 0, record.length, 0L).getLong(0)

  test("a file stops trying the fast path once more than a quarter of 16 records gave up") {
    val d = new ExampleDeserializer(schema, RecordType.Example, "test.tfrecord")
    // 4 of the first 16 give up: a quarter, not more.
    for (i <- 0 until 16) {
      assertEquals(read(d, if (i % 4 == 0) unusual else usual), 7L)
      assert(d.triesFastPath, s"record $i")
    }
    // The 5th of 17: more than a quarter.
    assertEquals(read(d, unusual), 7L)
    assert(!d.triesFastPath)
    assertEquals(read(d, usual), 7L) // read by the general path
  }

  test("a file of usual records keeps the fast path; fewer than 16 records are not judged") {
    val d = new ExampleDeserializer(schema, RecordType.Example, "test.tfrecord")
    for (_ <- 0 until 10) assertEquals(read(d, unusual), 7L)
    assert(d.triesFastPath) // 10 of 10 gave up, but 10 records are too few to judge
    val kept = new ExampleDeserializer(schema, RecordType.Example, "test.tfrecord")
    for (i <- 0 until 1000) assertEquals(read(kept, if (i % 5 == 0) unusual else usual), 7L)
    assert(kept.triesFastPath)
  }

  test("the fast path is tried on Example records only, and not with decoder=interpreted") {
    assert(new ExampleDeserializer(schema, RecordType.Example, "t").triesFastPath)
    assert(!new ExampleDeserializer(schema, RecordType.SequenceExample, "t").triesFastPath)
    assert(!new ExampleDeserializer(schema, RecordType.Example, "t", fastPath = false)
      .triesFastPath)
  }
}
