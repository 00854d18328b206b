package io.github.sparktfrecord

import org.apache.spark.sql.types._

import ErrorText._

import io.github.sparktfrecord.codec.FeaturePaths
import io.github.sparktfrecord.tfds.{TFDSFeature, TFDSFeatures}

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

  private def encoded(dtype: String, encoding: String, dims: String*): String =
    tensor(dtype, dims: _*).replace(""""encoding": "none"""", s""""encoding": "$encoding"""")

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

  private def dataset(feature: String): String =
    s"""{"pythonClassName": "${M}dataset_feature.Dataset",
        "sequence": {"feature": $feature, "length": "-1"}}"""

  test("sequences nested in sequences, and RLDS's Dataset, are nested arrays and arrays") {
    // As TFDS 4.9.10's features.json spells them (FeaturesDict.save_config).
    val parsed = TFDSFeatures.parse(dict(
      "x" -> sequence(sequence(tensor("int64"))),
      "x3" -> sequence(sequence(sequence(tensor("string")))),
      "s" -> sequence(dict("tokens" -> sequence(tensor("string")), "score" -> tensor("float32"),
        "box" -> tensor("float32", "4"))),
      "steps" -> dataset(dict("observation" -> tensor("float32", "2"),
        "tokens" -> sequence(tensor("int64")), "action" -> tensor("int64"),
        "reward" -> tensor("float32"), "is_first" -> tensor("bool"),
        "is_last" -> tensor("bool"))),
      "ids" -> dataset(tensor("int64"))))
    val schema = TFDSFeatures.schema(parsed, Map.empty)
    assertEquals(schema.simpleString,
      "struct<x:array<array<bigint>>,x3:array<array<array<binary>>>," +
        "s:array<struct<tokens:array<binary>,score:float,box:array<float>>>," +
        "steps:array<struct<observation:array<float>,tokens:array<bigint>,action:bigint," +
        "reward:float,is_first:boolean,is_last:boolean>>,ids:array<bigint>>")
    def element(name: String): StructType =
      schema(name).dataType.asInstanceOf[ArrayType].elementType.asInstanceOf[StructType]
    // A list leaf of a sequence of dicts is ragged (no fixed length); a fixed shape is not.
    assert(!element("s")("tokens").metadata.contains(FeaturePaths.ListLengthKey))
    assertEquals(element("s")("box").metadata.getLong(FeaturePaths.ListLengthKey), 4L)
    assertEquals(element("steps")("observation").metadata.getLong(FeaturePaths.ListLengthKey),
      2L)
    assertEquals(schema("steps").metadata.getString(TFDSFeatures.ConnectorKey), "Dataset")
    assert(!schema("s").metadata.contains(TFDSFeatures.ConnectorKey))
    // The Dataset stays a Dataset when written back.
    val json = TFDSFeatures.toJson(parsed)
    assert(json.contains(s""""pythonClassName": "${M}dataset_feature.Dataset""""), json)
    assertEquals(TFDSFeatures.parse(json), parsed)
    // The schema read is the schema checked, with the connectors in its metadata.
    val checked = TFDSFeatures.check(StructType.fromDDL(
        "x array<array<int>>, x3 array<array<array<string>>>, " +
          "s array<struct<tokens array<string>, score double, box array<float>>>, " +
          "steps array<struct<observation array<float>, tokens array<bigint>, action int, " +
          "reward float, is_first boolean, is_last boolean>>, ids array<bigint>"), parsed)
    assertEquals(checked("x").metadata.getString(TFDSFeatures.ConnectorKey), "Sequence")
    assertEquals(checked("ids").metadata.getString(TFDSFeatures.ConnectorKey), "Dataset")
    def fails(ddl: String, message: String): Unit = {
      val e = intercept[IllegalArgumentException](TFDSFeatures.check(StructType.fromDDL(ddl),
        TFDSFeatures.parse(dict("x" -> sequence(sequence(tensor("int64")))))))
      assert(e.text.contains(message), e.text)
    }
    fails("x array<bigint>",
      "Column 'x' has type array<bigint>, which cannot be written as the " +
        "TFDS feature Sequence of Sequence of Tensor (a scalar of int64) (2 nested arrays)")
    fails("x array<array<array<bigint>>>", "Column 'x' has type array<array<array<bigint>>>")
    fails("x array<array<string>>", "Column 'x' has type array<array<string>>")
  }

  test("a fixed length on a field checked as a ragged Sequence leaf is dropped") {
    val withLength = StructType.fromDDL("s array<struct<tokens array<bigint>>>")
    val element = withLength("s").dataType.asInstanceOf[ArrayType].elementType
      .asInstanceOf[StructType]
    val tokens = element("tokens").copy(metadata =
      new MetadataBuilder().putLong(FeaturePaths.ListLengthKey, 3).build())
    val schema = StructType(Seq(withLength("s").copy(dataType =
      ArrayType(StructType(Seq(tokens)), containsNull = false))))
    val checked = TFDSFeatures.check(schema,
      TFDSFeatures.parse(dict("s" -> sequence(dict("tokens" -> sequence(tensor("int64")))))))
    val field = checked("s").dataType.asInstanceOf[ArrayType].elementType
      .asInstanceOf[StructType]("tokens")
    assert(!field.metadata.contains(FeaturePaths.ListLengthKey))
  }

  test("connectors stored ragged or encoded, and unknown ones, are refused by name") {
    def refused(feature: String, message: String): Unit = {
      val e = intercept[IllegalArgumentException](
        TFDSFeatures.schema(TFDSFeatures.parse(dict("x" -> feature)), Map.empty))
      assert(e.text.contains(message), e.text)
    }
    refused(sequence(tensor("int64", "-1")),
      "TFDS feature 'x' (Sequence) is not supported: " +
        "a sequence of Tensor of shape (None) has an unknown dimension in each element")
    refused(sequence(sequence(tensor("float32", "2"))),
      "TFDS feature 'x' (Sequence) is not " +
        "supported: a Tensor of shape (2) at the bottom of a nested sequence")
    refused(sequence(dict("b" -> tensor("float32", "4", "-1"))),
      "TFDS feature 'x/b' (Tensor) is not supported: shape (4, None) has an unknown dimension " +
        "after the first")
    refused(sequence(dict("b" -> tensor("float32", "-1"))),
      "TFDS feature 'x/b' (Tensor) is not supported: shape (None) inside a Sequence")
    refused(sequence(dict("b" -> sequence(tensor("float32", "4")))),
      "TFDS feature 'x/b' (Sequence) is not supported: a Tensor of shape (4) at the bottom")
    refused(sequence(dict("inner" -> sequence(dict("a" -> tensor("int64"))))),
      "TFDS feature 'x/inner' (Sequence) is not supported: a sequence of dicts inside a sequence")
    refused(sequence(sequence(dict("a" -> tensor("int64")))),
      "TFDS feature 'x' (Sequence) is not supported: a sequence of dicts inside a sequence")
    refused(dataset(dataset(dict("a" -> tensor("int64")))),
      "TFDS feature 'x' (Dataset) is not supported: a sequence of dicts inside a sequence")
    refused(tensor("int64", "3", "-1"), "shape (3, None) has an unknown dimension after the first")
    refused(encoded("int64", "zlib", "-1", "3"),
      "TFDS feature 'x' (Tensor) is not supported: an encoded tensor of shape (None, 3) (at " +
        "most one unknown dimension) is stored as one bytes value under its own name")
    refused(encoded("uint16", "bytes", "-1", "-1"),
      "TFDS feature 'x' (Tensor) is not supported: an encoded tensor of dtype uint16 has no " +
        "Spark type (supported: bool, float32, float64, int16, int32, int64, int8, uint8)")
    refused(encoded("int64", "png", "-1", "-1"), "encoding 'png' is not bytes or zlib")
    refused(dict("y" -> encoded("int64", "bytes", "-1", "-1")),
      "TFDS feature 'x/y' (Tensor) is not supported: an encoded tensor is supported only as a " +
        "top-level feature")
    refused(s"""{"pythonClassName": "my.module.Custom", "custom": {}}""",
      "TFDS feature 'x' (Custom) is not supported")
  }

  test("an encoded tensor with unknown dimensions: nested arrays, its layout in the metadata") {
    val parsed = TFDSFeatures.parse(dict("m" -> encoded("float32", "zlib", "-1", "-1"),
      "c" -> encoded("uint8", "bytes", "-1", "-1", "3")))
    val schema = TFDSFeatures.schema(parsed, Map.empty)
    assertEquals(schema.simpleString,
      "struct<m:array<array<float>>,c:array<array<array<smallint>>>>")
    assertEquals(schema("m").metadata.getString(FeaturePaths.TensorEncodingKey), "zlib")
    assertEquals(schema("m").metadata.getString(FeaturePaths.TensorDtypeKey), "float32")
    assertEquals(schema("c").metadata.getString(FeaturePaths.TensorEncodingKey), "bytes")
    assertEquals(schema("c").metadata.getString(FeaturePaths.TensorDtypeKey), "uint8")
    // Checked against the features: the same metadata; another type is named.
    val checked = TFDSFeatures.check(StructType.fromDDL(
        "m array<array<float>>, c array<array<array<smallint>>>"), parsed)
    assertEquals(checked("m").metadata, schema("m").metadata)
    val e = intercept[IllegalArgumentException](TFDSFeatures.check(StructType.fromDDL(
        "m array<array<double>>, c array<array<array<smallint>>>"), parsed))
    assert(e.text.contains("Column 'm' has type array<array<double>>, which cannot be written " +
        "as the TFDS feature Tensor (shape (None, None) of float32): its type is " +
        "array<array<float>>"), e.text)
    // Without features, a column read so is written as the same encoded tensor.
    val json = TFDSFeatures.toJson(TFDSFeatures.fromSchema(schema))
    assertEquals(TFDSFeatures.schema(TFDSFeatures.parse(json), Map.empty)("m"), schema("m"))
    assert(json.contains("\"encoding\": \"zlib\""), json)
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
      "f array<float>, g array<string>, h struct<i bigint>, j array<struct<k int, l string>>, " +
      "m array<array<int>>, n array<array<array<string>>>, " +
      "o array<struct<tokens array<string>, deep array<array<double>>, score float>>")
    val features = TFDSFeatures.fromSchema(schema)
    val json = TFDSFeatures.toJson(features)
    assert(json.contains(s""""pythonClassName": "${M}text_feature.Text""""), json)
    assertEquals(TFDSFeatures.parse(json), features)
    assertEquals(features.fields.toMap.apply("m"),
      TFDSFeature.Sequence(TFDSFeature.Sequence(TFDSFeature.Tensor("Tensor", "int64", Nil))))
    assertEquals(TFDSFeatures.schema(features, Map.empty).simpleString,
      "struct<a:bigint,b:float,c:boolean,d:string,e:binary,f:array<float>,g:array<binary>," +
        "h:struct<i:bigint>,j:array<struct<k:bigint,l:string>>,m:array<array<bigint>>," +
        "n:array<array<array<string>>>," +
        "o:array<struct<tokens:array<string>,deep:array<array<float>>,score:float>>>")
    // A list of a fixed length in an array of structs is a Tensor of that shape.
    val fixed = StructType.fromDDL("o array<struct<box array<float>>>")
    val box = StructField("box", ArrayType(FloatType, containsNull = false), nullable = true,
      new MetadataBuilder().putLong(FeaturePaths.ListLengthKey, 4).build())
    val boxes = TFDSFeatures.fromSchema(StructType(Seq(fixed("o").copy(dataType =
      ArrayType(StructType(Seq(box)), containsNull = false)))))
    assertEquals(boxes.fields.toMap.apply("o"),
      TFDSFeature.Sequence(TFDSFeature.Dict(
        Seq("box" -> TFDSFeature.Tensor("Tensor", "float32", Seq(4L))))))
    val nestedStructs = intercept[IllegalArgumentException](
      TFDSFeatures.fromSchema(StructType.fromDDL("o array<struct<p array<struct<q int>>>>")))
    assert(nestedStructs.text.startsWith("Column 'o.p' holds arrays of structs inside an array"),
      nestedStructs.text)
    val e = intercept[IllegalArgumentException](
      TFDSFeatures.fromSchema(StructType.fromDDL("t timestamp")))
    assert(e.text.startsWith("Column 't' has type timestamp, which has no TFDS feature"))
    assertEquals(TFDSFeatures.labelsFile("objects/label"), "objects-label.labels.txt")
  }
}
