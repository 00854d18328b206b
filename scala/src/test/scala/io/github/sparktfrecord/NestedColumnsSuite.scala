package io.github.sparktfrecord

import java.io.File

import org.apache.spark.sql.Row

/**
 * Struct columns and arrays of structs through a write and a read: stored as path-named
 * features (`image/object/xmin`), read back whole with the schema, one column per feature
 * without it, and as structs again with `inferNesting`.
 */
class NestedColumnsSuite extends LocalSparkSuite {
  private val Schema = "id long not null, " +
    "image struct<encoded binary, height bigint, " +
    "object struct<xmin array<float>, label array<bigint>>>, " +
    "boxes array<struct<x float, label bigint, name string, inner struct<a int, b double>>>"
  private val Rows = Seq(
    Row(1L, Row(Array[Byte](-1, -40, 0), 480L, Row(Seq(0.5f, 0.25f), Seq(1L, 2L))),
      Seq(Row(0.125f, 3L, "a", Row(1, 2.0)), Row(0.25f, 4L, "é", Row(2, -0.0)))),
    Row(2L, null, Seq()),
    Row(3L, Row(null, 5L, null), null),
    Row(4L, Row(Array.emptyByteArray, null, Row(Seq(), Seq())),
      Seq(Row(Float.PositiveInfinity, Long.MinValue, "", Row(Int.MinValue, 1.5)))),
    Row(5L, Row(null, null, null), Seq(Row(0.0f, 0L, "z", Row(0, 0.0)))))

  private def written(dir: File): String = {
    val out = new File(dir, "out").getPath
    frame(Schema, Rows: _*).write.format("tfrecord").save(out)
    out
  }

  test("structs and arrays of structs round trip with the schema") {
    withTempDir { dir =>
      val back = spark.read.format("tfrecord").schema(Schema).load(written(dir))
      // Row 5's struct has every leaf null: no feature is written for it, so it reads back null.
      val expected = Rows.map(r => if (r.getLong(0) == 5L) Row(5L, null, r.get(2)) else r)
      assertEquals(back.collect().sortBy(_.getLong(0)).toSeq, expected)
    }
  }

  test("without a schema: one column per path-named feature") {
    withTempDir { dir =>
      val flat = spark.read.format("tfrecord").load(written(dir))
      assertEquals(flat.schema.simpleString,
        "struct<id:bigint,image/encoded:binary," +
          "image/height:bigint,image/object/xmin:array<float>,image/object/label:array<bigint>," +
          "boxes/x:array<float>,boxes/label:array<bigint>,boxes/name:array<string>," +
          "boxes/inner/a:array<bigint>,boxes/inner/b:array<float>>")
      val byId = flat.collect().map(r => r.getLong(0) -> r).toMap
      assertEquals(byId(1L).getAs[Seq[Long]]("boxes/inner/a"), Seq(1L, 2L))
      assertEquals(byId(1L).getAs[Seq[String]]("boxes/name"), Seq("a", "é"))
      assertEquals(byId(2L).getAs[Seq[Float]]("boxes/x"), Seq())
      assertEquals(byId(3L).getAs[Seq[Float]]("boxes/x"), null)
      assertEquals(byId(4L).getAs[Seq[Long]]("image/object/label"), Seq())
    }
  }

  test("inferNesting turns path-like names into struct columns") {
    withTempDir { dir =>
      val nested = spark.read.format("tfrecord").option("inferNesting", "true")
        .load(written(dir))
      assertEquals(nested.schema.simpleString,
        "struct<id:bigint," +
          "image:struct<encoded:binary,height:bigint," +
          "object:struct<xmin:array<float>,label:array<bigint>>>," +
          "boxes:struct<x:array<float>,label:array<bigint>,name:array<string>," +
          "inner:struct<a:array<bigint>,b:array<float>>>>")
      val first = nested.where("id = 1").select("image.height", "image.object.xmin", "boxes.x")
      assertEquals(first.collect().toSeq, Seq(Row(480L, Seq(0.5f, 0.25f), Seq(0.125f, 0.25f))))
    }
  }
}
