package io.github.sparktfrecord

import java.io.File

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.types.{MetadataBuilder, StructType}

/**
 * Nested column pruning ([[TFRecordSchemaPruning]], installed by the session's
 * [[TFRecordExtensions]]): the scan receives only the struct fields a query uses, and the
 * features of the others are never decoded.
 */
class TFRecordSchemaPruningSuite extends LocalSparkSuite {
  private val Schema = "id long, image struct<encoded binary, height bigint>, " +
    "boxes array<struct<x float, label bigint>>"
  /** `image/encoded` is a bytes feature: read as bigint, it fails whenever it is decoded. */
  private val Wrong = "id long, image struct<encoded bigint, height bigint>, " +
    "boxes array<struct<x bigint, label bigint>>"

  private def written(dir: File): String = {
    val out = new File(dir, "out").getPath
    frame(Schema,
      Row(1L, Row(Array[Byte](-1, -40), 480L), Seq(Row(0.5f, 3L), Row(0.25f, 4L))),
      Row(2L, Row(null, 5L), Seq()),
      Row(3L, null, null))
      .write.format("tfrecord").save(out)
    out
  }

  private def read(path: String, ddl: String): DataFrame =
    spark.read.format("tfrecord").schema(ddl).load(path)

  /** The data schema of the scan the optimizer planned for `df`. */
  private def scanned(df: DataFrame): StructType =
    df.queryExecution.optimizedPlan.collectFirst {
      case r: LogicalRelation if r.relation.isInstanceOf[HadoopFsRelation] =>
        r.relation.asInstanceOf[HadoopFsRelation].dataSchema
    }.get

  private def withPruning[T](enabled: Boolean)(body: => T): T = {
    val key = "spark.sql.optimizer.nestedSchemaPruning.enabled"
    spark.conf.set(key, enabled.toString)
    try body
    finally spark.conf.unset(key)
  }

  test("the scan receives only the fields the projection and the filter use") {
    withTempDir { dir =>
      val df = read(written(dir), Schema).where("image.height > 6")
        .select("id", "image.height", "boxes.label")
      assertEquals(scanned(df).simpleString,
        "struct<id:bigint,image:struct<height:bigint>,boxes:array<struct<label:bigint>>>")
      assertEquals(df.collect().toSeq, Seq(Row(1L, 480L, Seq(3L, 4L))))
    }
  }

  test("a feature no query uses is never decoded: a wrong type for it does not fail") {
    withTempDir { dir =>
      val path = written(dir)
      def query() = read(path, Wrong).where("image.height > 6")
        .select("id", "image.height", "boxes.label")
      assertEquals(query().collect().toSeq, Seq(Row(1L, 480L, Seq(3L, 4L))))
      val whole = intercept[Exception](read(path, Wrong).select("image").collect())
      assert(messages(whole).contains("Column 'image.encoded' (bigint) cannot be read"),
        messages(whole))
      // Spark's own switch turns pruning off: the whole struct is then read, and fails alike.
      withPruning(enabled = false) {
        assertEquals(scanned(query()), StructType.fromDDL(Wrong))
        val unpruned = intercept[Exception](query().collect())
        assert(messages(unpruned).contains("Column 'image.encoded' (bigint)"), messages(unpruned))
      }
    }
  }

  test("the pruned schema keeps the metadata of the fields it keeps") {
    withTempDir { dir =>
      val path = written(dir)
      val note = new MetadataBuilder().putString("comment", "pixels").build()
      val full = StructType.fromDDL(Schema)
      val image = full("image").dataType.asInstanceOf[StructType]
      val schema = StructType(full.fields.map { f =>
        if (f.name != "image") f
        else f.copy(dataType = StructType(image.fields.map(_.copy(metadata = note))))
      })
      val df = spark.read.format("tfrecord").schema(schema).load(path).select("image.height")
      val kept = scanned(df)("image").dataType.asInstanceOf[StructType]
      assertEquals(kept.fieldNames.toSeq, Seq("height"))
      assertEquals(kept("height").metadata, note)
      assertEquals(df.collect().map(_.get(0)).toSet, Set[Any](480L, 5L, null))
    }
  }

  test("a query of whole columns leaves the data schema whole (Spark prunes columns itself)") {
    withTempDir { dir =>
      val path = written(dir)
      val whole = read(path, Schema).select("id", "image")
      assertEquals(scanned(whole), StructType.fromDDL(Schema))
      assertEquals(whole.where("id = 1").collect().map(_.getStruct(1).getLong(1)).toSeq,
        Seq(480L))
    }
  }
}
