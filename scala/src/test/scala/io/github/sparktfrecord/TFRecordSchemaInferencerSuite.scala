package io.github.sparktfrecord

import java.io.File

import org.apache.spark.sql.Row

import ErrorText._
import ProtoBytes._

/**
 * Schema inference through `spark.read.format("tfrecord").load`: the types inferred from the
 * files' features (docs/inference.md), and the rows read with them.
 */
class TFRecordSchemaInferencerSuite extends LocalSparkSuite {
  private def int64s(values: Long*): Array[Byte] = int64List(packedInt64(values: _*))
  private def floats(values: Float*): Array[Byte] = floatList(packedFloat(values: _*))
  private def raw(values: Array[Byte]*): Array[Byte] = bytesList(values.map(field(1, _)): _*)

  private def inferred(dir: File, options: (String, String)*) =
    spark.read.format("tfrecord").options(options.toMap).load(dir.getPath)

  test("the kinds and shapes of what the writer wrote") {
    withTempDir { dir =>
      val out = new File(dir, "out").getPath
      frame("id long, f double, s string, b binary, ai array<int>, af1 array<float>, " +
          "flag boolean", Row(1L, 0.5, "a", Array[Byte](0), Seq(1, 2), Seq(0.5f), true))
        .write.format("tfrecord").save(out)
      val df = spark.read.format("tfrecord").load(out)
      // Column order is the writer's; a one-element list is a scalar until a longer one is seen;
      // what TensorFlow cannot tell from int64 or valid UTF-8 comes back as such.
      assertEquals(df.schema.simpleString,
        "struct<id:bigint,f:float,s:string,b:string," +
          "ai:array<bigint>,af1:float,flag:bigint>")
      assertEquals(df.collect().toSeq, Seq(Row(1L, 0.5f, "a", "\u0000", Seq(1L, 2L), 0.5f, 1L)))
    }
  }

  test("kinds and lengths merge across files") {
    withTempDir { dir =>
      writeRecords(new File(dir, "a.tfrecord"),
        example(
          entry("n", int64s(1)), entry("m", int64s(7)), entry("len", int64s(1))))
      writeRecords(new File(dir, "b.tfrecord"),
        example(
          entry("n", floats(2.5f)), entry("m", bytesList(bytesValues("seven"))),
          entry("len", int64s(1, 2, 3))))
      val df = inferred(dir)
      assertEquals(df.schema.simpleString, "struct<n:float,m:string,len:array<bigint>>")
      // int64 read into the merged float column, and into the merged string column as text.
      assertEquals(df.collect().sortBy(_.getFloat(0)).toSeq,
        Seq(Row(1.0f, "7", Seq(1L)), Row(2.5f, "seven", Seq(1L, 2L, 3L))))
    }
  }

  test("empty and unset features: an empty list keeps its kind, an unset one is a string") {
    withTempDir { dir =>
      writeRecords(new File(dir, "a.tfrecord"),
        example(entry("empty_int", int64List()), entry("unset", Array.emptyByteArray),
          entry("x", int64s(5))),
        example(entry("empty_int", int64List())))
      val df = inferred(dir)
      assertEquals(df.schema.simpleString, "struct<empty_int:bigint,unset:string,x:bigint>")
      assertEquals(df.collect().map(_.toSeq).toSet,
        Set(Seq(null, null, 5L), Seq(null, null, null)))
    }
  }

  test("bytes are binary as soon as one sampled value is not UTF-8, else string") {
    withTempDir { dir =>
      val jpeg = hex("ff d8 ff e0")
      val overlong = hex("c0 af") // an overlong '/': not well-formed UTF-8
      writeRecords(new File(dir, "a.tfrecord"),
        example(entry("image", raw(jpeg)), entry("text", raw(utf8("é"))),
          entry("ids", raw(utf8("a1"), utf8(""))), entry("late", raw(utf8("ok")))),
        example(entry("image", raw(Array.emptyByteArray)), entry("text", raw(utf8(""))),
          entry("ids", raw(utf8("b2"), utf8("c3"))), entry("late", raw(utf8("fine")))))
      writeRecords(new File(dir, "b.tfrecord"),
        example(entry("late", raw(overlong)), entry("ids", raw(utf8("d4")))))
      val df = inferred(dir)
      assertEquals(df.schema.simpleString,
        "struct<image:binary,text:string,ids:array<string>,late:binary>")
      // Binary comes back byte-exact, and so does text.
      val got = df.collect().map { r =>
        (Option(r.getAs[Array[Byte]]("image")).map(toHex), r.getAs[String]("text"),
          r.getSeq[String](2), toHex(r.getAs[Array[Byte]]("late")))
      }.toSet
      assertEquals(got,
        Set(
          (Some("ff d8 ff e0"), "é", Seq("a1", ""), toHex(utf8("ok"))),
          (Some(""), "", Seq("b2", "c3"), toHex(utf8("fine"))),
          (None, null, Seq("d4"), "c0 af")))
    }
  }

  test("the sampling options limit the records inference reads, not the rows") {
    withTempDir { dir =>
      for (i <- 0 until 4) {
        writeRecords(new File(dir, s"part-$i.tfrecord"),
          example(entry(s"f$i", int64s(i))), example(entry(s"late$i", int64s(i))))
      }
      val two = inferred(dir, "inferSchemaMaxFiles" -> "2", "inferSchemaMaxRecords" -> "1")
      assertEquals(two.columns.toSeq, Seq("f0", "f2")) // evenly spread over the sorted files
      assertEquals(two.count(), 8L)
      val all = inferred(dir, "inferSchemaMaxFiles" -> "-1", "inferSchemaMaxRecords" -> "-1")
      assertEquals(all.columns.toSeq,
        Seq("f0", "late0", "f1", "late1", "f2", "late2", "f3", "late3"))
    }
  }

  test("nothing to infer from fails asking for a schema") {
    withTempDir { dir =>
      val empty = new File(dir, "empty")
      empty.mkdir()
      writeRecords(new File(empty, "a.tfrecord"))
      val noRecords = intercept[Exception](inferred(empty))
      assert(noRecords.text.startsWith("Cannot infer a TFRecord schema"), noRecords.text)
      val featureless = new File(dir, "featureless")
      featureless.mkdir()
      writeRecords(new File(featureless, "a.tfrecord"), example(), Array.emptyByteArray)
      val noFeatures = intercept[Exception](inferred(featureless))
      assert(noFeatures.text.contains("2 records read from 1 of 1 files have no features"),
        noFeatures.text)
    }
  }

  test("x/indices, x/values and x/size (vectorLayout sparse) infer one vector column x") {
    withTempDir { dir =>
      writeRecords(new File(dir, "a.tfrecord"),
        example(entry("id", int64s(1)), entry("x/indices", int64s(2, 5)),
          entry("x/values", floats(0.5f, -1f)), entry("x/size", int64s(8))),
        example(entry("id", int64s(2)), entry("x/indices", int64List()),
          entry("x/values", floatList()), entry("x/size", int64s(8))),
        // Not a vector: its size holds two values; and y's parts without y/size.
        example(entry("z/indices", int64s(1)), entry("z/values", floats(1f)),
        entry("z/size", int64s(3, 4)), entry("y/indices", int64s(0)),
        entry("y/values", floats(1f))))
      val df = inferred(dir)
      // The test class path has a VectorUDT by spark-mllib's class name (a stand-in).
      assertEquals(df.schema.fields.map(f => f.name -> f.dataType.typeName).toSeq,
        Seq("id" -> "long", "x" -> "vector", "z/indices" -> "long", "z/values" -> "float",
          "z/size" -> "array", "y/indices" -> "long", "y/values" -> "float"))
      // Internal rows: the stand-in UDT has no user class Spark can turn them into.
      val rows = df.select("id", "x").queryExecution.toRdd.map(_.copy()).collect()
        .filter(!_.isNullAt(0)).sortBy(_.getLong(0))
      val vectors = rows.toSeq.map { r =>
        val v = r.getStruct(1, 4)
        (v.getByte(0), v.getInt(1), v.getArray(2).toIntArray.toSeq,
          v.getArray(3).toDoubleArray.toSeq)
      }
      assertEquals(vectors,
        Seq((0.toByte, 8, Seq(2, 5), Seq(0.5, -1.0)),
          (0.toByte, 8, Nil, Nil)))
    }
  }

  test("a vector written sparse by the writer reads back, inferred, with another separator") {
    withTempDir { dir =>
      writeRecords(new File(dir, "a.tfrecord"),
        example(entry("x.indices", int64s(0)), entry("x.values", floats(2f)),
          entry("x.size", int64s(1))))
      assertEquals(inferred(dir, "pathSeparator" -> ".").schema("x").dataType.typeName,
        "vector")
      // With the default separator they are three columns.
      assertEquals(inferred(dir).schema.fieldNames.toSeq, Seq("x.indices", "x.values", "x.size"))
    }
  }

  test("x/ragged_flat_values and x/ragged_row_lengths_k infer one list of lists column x") {
    withTempDir { dir =>
      writeRecords(new File(dir, "a.tfrecord"),
        example(entry("id", int64s(1)), entry("x/ragged_row_lengths_0", int64s(2, 0, 1)),
          entry("x/ragged_flat_values", int64s(1, 2, 3)),
          entry("a/b/ragged_flat_values", bytesList(bytesValues("p", "q"))),
          entry("a/b/ragged_row_lengths_1", int64s(1, 0, 1)),
          entry("a/b/ragged_row_lengths_0", int64s(3))),
        example(entry("id", int64s(2)), entry("x/ragged_row_lengths_0", int64List()),
          entry("x/ragged_flat_values", int64List())),
        // A gap in the levels: plain columns.
        example(entry("g/ragged_flat_values", floats(1f)),
        entry("g/ragged_row_lengths_1",
          int64s(1))))
      val df = inferred(dir)
      assertEquals(df.schema.simpleString,
        "struct<id:bigint,x:array<array<bigint>>,a/b:array<array<array<string>>>," +
          "g/ragged_flat_values:float,g/ragged_row_lengths_1:bigint>")
      assertEquals(df.select("id", "x", "a/b").collect().toSeq.filter(!_.isNullAt(0))
          .sortBy(_.getLong(0)),
        Seq(Row(1L, Seq(Seq(1L, 2L), Seq(), Seq(3L)), Seq(Seq(Seq("p"), Seq(), Seq("q")))),
          Row(2L, Seq(), null)))
      // With inferNesting the path names a struct's field.
      assertEquals(inferred(dir, "inferNesting" -> "true").schema("a").dataType.simpleString,
        "struct<b:array<array<array<string>>>>")
    }
  }

  test("a list of lists written by the writer reads back inferred, at depth 2 and 3") {
    withTempDir { dir =>
      val out = new File(dir, "out").getPath
      val rows = Seq(Row(1L, Seq(Seq(0.5f, -0.0f), Seq()), Seq(Seq(Seq("a"), Seq()), Seq())),
        Row(2L, Seq(), Seq(Seq(Seq("", "b")))))
      frame("id long, f array<array<float>>, s array<array<array<string>>>", rows: _*)
        .write.format("tfrecord").save(out)
      val df = spark.read.format("tfrecord").load(out)
      assertEquals(df.schema.simpleString,
        "struct<id:bigint,f:array<array<float>>,s:array<array<array<string>>>>")
      assertEquals(df.collect().sortBy(_.getLong(0)).toSeq, rows)
    }
  }
}
