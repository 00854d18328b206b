package io.github.sparktfrecord

import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.FeaturePaths
import io.github.sparktfrecord.tfds.TFDSFeatures

/**
 * TFDS feature connectors: `features.json` (as TFDS 4.9 writes it) to a Spark schema, a schema
 * checked against features, features derived from a schema and written as TFDS's JSON, and the
 * connectors refused.
 */
class TFDSFeaturesSuite extends UnitSuite {
  private val M = "tensorflow_datasets.core.features."

  private def tensor(dtype: String, dims: String*): String = {
    val shape = if (dims.isEmpty) "{}"
    else dims.map(d => s""""$d"""").mkString(
      """{"dimensions": [""", ", ", "]}")
    s"""{"pythonClassName": "${M}tensor_feature.Tensor",
        "tensor": {"shape": $shape, "dtype": "$dtype", "encoding": "none"}}"""
  }

  private def dict(fields: (String, String)*): String =
    fields.map { case (k, v) => s""""$k": $v""" }.mkString(
      s"""{"pythonClassName": "${M}features_dict.FeaturesDict", "featuresDict": {"features": {""",
      ", ", "}}}")

  private def sequence(feature: String): String =
    s"""{"pythonClassName": "${M}sequence_feature.Sequence",
        "sequence": {"feature": $feature, "length": "-1"}}"""

  private val classLabel =
    s"""{"pythonClassName": "${M}class_label_feature.ClassLabel",
        "classLabel": {"numClasses": "3"}}"""

  private val features = dict(
    "id" -> tensor("int64"),
    "image" -> s"""{"pythonClassName": "${M}image_feature.Image",
                  "image": {"shape": {"dimensions": ["-1", "-1", "3"]}, "dtype": "uint8"}}""",
    "label" -> classLabel,
    "text" -> s"""{"pythonClassName": "${M}text_feature.Text", "text": {}}""",
    "vec" -> tensor("float32", "-1"),
    "mat" -> tensor("int32", "2", "3"),
    "flag" -> tensor("bool"),
    "raw" -> tensor("string"),
    "objects" -> sequence(dict(
      "bbox" -> s"""{"pythonClassName": "${M}bounding_boxes.BBoxFeature",
                   "boundingBox": {"shape": {"dimensions": ["4"]}, "dtype": "float32"}}""",
      "label" -> classLabel)),
    "frames" -> s"""{"pythonClassName": "${M}video_feature.Video",
                   "video": {"shape": {"dimensions": ["-1", "-1", "-1", "3"]},
                             "dtype": "uint8"}}""",
    "steps" -> sequence(tensor("int64")),
    "meta" -> dict("size" -> tensor("float64")))

  test("features.json to a Spark schema, with class names and fixed lengths in metadata") {
    val schema = TFDSFeatures.schema(TFDSFeatures.parse(features),
      Map("label" -> Seq("a", "b", "c")))
    assertEquals(schema.simpleString,
      "struct<id:bigint,image:binary,label:bigint,text:string," +
        "vec:array<float>,mat:array<bigint>,flag:boolean,raw:binary,objects:array<struct<" +
        "bbox:array<float>,label:bigint>>,frames:array<binary>,steps:array<bigint>," +
        "meta:struct<size:double>>")
    assertEquals(schema("label").metadata.getStringArray(TFDSFeatures.ClassNamesKey).toSeq,
      Seq("a", "b", "c"))
    assertEquals(schema("label").metadata.getString(TFDSFeatures.ConnectorKey), "ClassLabel")
    assertEquals(schema("mat").metadata.getLong(FeaturePaths.ListLengthKey), 6L)
    val element = schema("objects").dataType.asInstanceOf[ArrayType].elementType
      .asInstanceOf[StructType]
    assertEquals(element("bbox").metadata.getLong(FeaturePaths.ListLengthKey), 4L)
    assert(!schema("vec").metadata.contains(FeaturePaths.ListLengthKey))
    // The legacy to_json() form reads the same.
    val legacy = s"""{"type": "${M}features_dict.FeaturesDict", "content": {"features": {
      "id": ${tensor("int64")}, "s": {"type": "${M}tensor_feature.Tensor",
      "content": {"shape": [null, 2], "dtype": "float32"}}}}}"""
    assertEquals(TFDSFeatures.schema(TFDSFeatures.parse(legacy), Map.empty).simpleString,
      "struct<id:bigint,s:array<float>>")
  }

  test("connectors stored ragged or encoded, and unknown ones, are refused by name") {
    def refused(feature: String, message: String): Unit = {
      val e = intercept[IllegalArgumentException](
        TFDSFeatures.schema(TFDSFeatures.parse(dict("x" -> feature)), Map.empty))
      assert(e.text.contains(message), e.text)
    }
    refused(sequence(sequence(tensor("int64"))), "TFDS feature 'x' (Sequence) is not supported")
    refused(sequence(tensor("int64", "-1")), "stored ragged")
    refused(tensor("int64", "-1", "-1"), "shape (-1, -1) is stored ragged")
    refused(s"""{"pythonClassName": "${M}tensor_feature.Tensor",
      "tensor": {"shape": {}, "dtype": "int64", "encoding": "zlib"}}""", "stored compressed")
    refused(s"""{"pythonClassName": "my.module.Custom", "custom": {}}""",
      "TFDS feature 'x' (Custom) is not supported")
  }

  test("a schema checked against features: metadata added, mismatches named") {
    val parsed = TFDSFeatures.parse(dict("id" -> tensor("int64"),
      "image" -> s"""{"pythonClassName": "${M}image_feature.Image", "image": {}}""",
      "objects" -> sequence(dict("bbox" -> s"""{"pythonClassName": "${M}bounding_boxes.BBoxFeature",
        "boundingBox": {}}""", "label" -> classLabel))))
    val ok = TFDSFeatures.check(StructType.fromDDL(
        "id int, image binary, objects array<struct<bbox array<double>, label bigint>>"), parsed)
    val element = ok("objects").dataType.asInstanceOf[ArrayType].elementType
      .asInstanceOf[StructType]
    assertEquals(element("bbox").metadata.getLong(FeaturePaths.ListLengthKey), 4L)
    def fails(ddl: String, message: String): Unit = {
      val e = intercept[IllegalArgumentException](
        TFDSFeatures.check(StructType.fromDDL(ddl), parsed))
      assert(e.text.contains(message), e.text)
    }
    val objects = "objects array<struct<bbox array<float>, label bigint>>"
    fails(s"id bigint, image string, $objects",
      "Column 'image' has type string, which cannot " +
        "be written as the TFDS feature Image (a scalar of string)")
    fails(s"id bigint, $objects", "The dataset's feature 'image' has no column")
    fails(s"id bigint, image binary, $objects, more int", "Column 'more' is not a feature")
    fails("id bigint, image binary, objects array<struct<bbox float, label bigint>>",
      "Column 'objects.bbox' has type float")
  }

  test("features from a schema, as TFDS's JSON, read back the same") {
    val schema = StructType.fromDDL("a tinyint, b double, c boolean, d string, e binary, " +
      "f array<float>, g array<string>, h struct<i bigint>, j array<struct<k int, l string>>")
    val features = TFDSFeatures.fromSchema(schema)
    val json = TFDSFeatures.toJson(features)
    assert(json.contains(s""""pythonClassName" : "${M}text_feature.Text""""), json)
    assertEquals(TFDSFeatures.parse(json), features)
    assertEquals(TFDSFeatures.schema(features, Map.empty).simpleString,
      "struct<a:bigint,b:float,c:boolean,d:string,e:binary,f:array<float>,g:array<binary>," +
        "h:struct<i:bigint>,j:array<struct<k:bigint,l:string>>>")
    val e = intercept[IllegalArgumentException](
      TFDSFeatures.fromSchema(StructType.fromDDL("t timestamp")))
    assert(e.text.startsWith("Column 't' has type timestamp, which has no TFDS feature"))
    assertEquals(TFDSFeatures.labelsFile("objects/label"), "objects-label.labels.txt")
  }
}
