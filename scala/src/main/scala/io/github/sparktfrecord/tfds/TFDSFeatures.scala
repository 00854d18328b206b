package io.github.sparktfrecord.tfds

import org.apache.spark.sql.types._

import io.github.sparktfrecord.{TFRecordArgumentException, TFRecordError}
import io.github.sparktfrecord.codec.{EncodedTensor, FeaturePaths, TypeTable}
import io.github.sparktfrecord.json.{Json, JsonParser}

/**
 * TensorFlow Datasets feature connectors as `features.json` describes them (the
 * `tfds.features.FeatureConnector.to_proto()` JSON, or its `to_json()` form), reduced to what is
 * stored in each record, and mapped to and from Spark types:
 *
 * | connector | stored | Spark |
 * |---|---|---|
 * | `FeaturesDict` | one feature per leaf, named by its path (`objects/bbox`) | struct |
 * | `Sequence`, `Dataset` of dicts | per leaf, the elements' values in one list | array of struct |
 * | `Sequence` of a tensor | the values of every element | array |
 * | `Sequence` of `Sequence`s of a scalar | `x/ragged_flat_values`, row lengths | nested arrays |
 * | `Tensor`, `Scalar` | int64, float or bytes list, row-major | scalar or array |
 * | `ClassLabel` | int64 | bigint (class names in the field's metadata) |
 * | `Text` | bytes | string |
 * | `Image`, `Video` (frames), encoded `Audio` | bytes | binary (array for video) |
 * | `BBoxFeature` | 4 floats | array<float> of 4 |
 * | encoded `Tensor`, 2+ unknown dimensions | `x/value`, `x/shape` | nested arrays |
 *
 * TFDS stores a sequence nested in a sequence (a `Sequence` of a `Sequence`, or a `Sequence` leaf
 * of a `Sequence` of a dict) ragged: `x/ragged_flat_values` and `x/ragged_row_lengths_k`, which
 * the codec reads and writes for an array of arrays, and for an array leaf of an array of structs
 * without a fixed length. A `Dataset` (RLDS's `steps`) is stored as a `Sequence`. Refused by name:
 * an encoded tensor with at most one unknown dimension (one bytes value under its own name), a
 * tensor with an unknown dimension in a sequence, a fixed-shape tensor at the bottom of a ragged
 * sequence (its row lengths count tensors, the codec's count values), a sequence of dicts inside
 * a sequence, and connectors not listed here.
 */
private[sparktfrecord] sealed trait TFDSFeature

private[sparktfrecord] object TFDSFeature {
  final case class Dict(fields: Seq[(String, TFDSFeature)]) extends TFDSFeature

  /**
   * A `Sequence`, or a `Dataset` (`connector`), which TFDS stores the same way.
   *
   * @param feature what each element is
   */
  final case class Sequence(feature: TFDSFeature, connector: String = "Sequence")
    extends TFDSFeature

  /**
   * One stored tensor.
   *
   * @param connector the connector's class name without its module (`Image`, `ClassLabel`)
   * @param dtype the stored dtype: `int64`, `float32`, `string`, ... (as TFDS spells them)
   * @param shape the stored shape of one value, -1 for an unknown dimension
   * @param encoding `none`, or how the values are stored as one bytes value (`bytes`, `zlib`)
   */
  final case class Tensor(connector: String, dtype: String, shape: Seq[Long],
      encoding: String = "none") extends TFDSFeature {
    /** Stored as `x/value` and `x/shape` ([[FeaturePaths.TensorEncodingKey]]). */
    def encoded: Boolean = encoding != "none"
    def values: Long = shape.product
  }
}

private[sparktfrecord] object TFDSFeatures {
  import TFDSFeature._

  private val Module = "tensorflow_datasets.core.features."
  /** The keys of a feature's proto JSON that are not its content. */
  private val NotContent = Set("pythonClassName", "description", "valueRange")

  /** Field metadata keys of columns read from, or checked against, a TFDS dataset. */
  final val ConnectorKey = "tfds.feature"
  final val ClassNamesKey = "tfds.classNames"

  def parse(json: String): Dict = parse(JsonParser.parse(json), "") match {
    case d: Dict => d
    case other => throw invalid("", s"the top-level feature must be a FeaturesDict, not $other")
  }

  /** The connector `node` describes, at feature path `path` (for messages). */
  private def parse(node: Json, path: String): TFDSFeature = {
    val (className, content) =
      if (node.has("type") && node.has("content")) (node("type").text, node("content"))
      else if (node.has("pythonClassName")) {
        val key = node.fields.map(_._1).find(k => !NotContent(k))
        (node("pythonClassName").text, key.map(node(_)).getOrElse(Json.obj()))
      } else throw invalid(path, s"not a TFDS feature connector: ${node.compact}")
    val name = className.substring(className.lastIndexOf('.') + 1)
    def shape(of: Json): Seq[Long] = {
      val dims = of.field("shape").flatMap {
        case s: Json.Arr => Some(s)
        case s => s.field("dimensions")
      }
      dims.toSeq.flatMap(_.elements).map(d => if (d.isNull) -1L else d.long)
    }
    def dtype(of: Json, default: String): String =
      of.field("dtype").map(_.text).getOrElse(default)
    name match {
      case "FeaturesDict" =>
        val features = content.field("features").getOrElse(content)
        Dict(features.fields.map { case (k, v) => k -> parse(v, join(path, k)) })
      // An RLDS episode's steps: TFDS stores a Dataset as a Sequence, and decodes it lazily.
      case "Sequence" | "Dataset" => Sequence(parse(content("feature"), path), name)
      case "Tensor" | "Scalar" =>
        val encoding = content.field("encoding").map(_.text.toLowerCase).getOrElse("none")
        val t = Tensor(name, dtype(content, "float32"), shape(content), encoding)
        if (t.encoded) checkEncoded(path, t)
        t
      case "ClassLabel" => Tensor(name, "int64", Nil)
      case "Text" =>
        if (content.has("encoder") || content.has("encoderConfig")) {
          unsupported(path, name, "text with an encoder is stored as token ids")
        }
        Tensor(name, "string", Nil)
      case "Image" | "LabeledImage" => Tensor("Image", "string", Nil)
      // One encoded image per frame.
      case "Video" => Tensor(name, "string", shape(content).take(1).padTo(1, -1L))
      case "Translation"
        if !content.field("variableLanguagesPerExample").exists(_.boolean) =>
        Dict(content("languages").elements.map(_.text -> Tensor("Text", "string", Nil)))
      case "BBoxFeature" => Tensor(name, "float32", Seq(4L))
      case "Audio" =>
        if (content.field("lazyDecode").exists(_.boolean)) {
          Tensor(name, "string", Nil)
        } else Tensor(name, dtype(content, "int64"), shape(content))
      case other => unsupported(path, other, "this connector is not supported by spark-tfrecord")
    }
  }

  /**
   * Refuses, by name, an encoded tensor spark-tfrecord does not read: with at most one unknown
   * dimension (stored as one bytes value under its own name, without its shape), or of a dtype
   * [[EncodedTensor]] has no Spark type for.
   */
  private def checkEncoded(path: String, t: Tensor): Unit = {
    if (!EncodedTensor.Encodings(t.encoding)) {
      unsupported(path, t.connector, s"encoding '${t.encoding}' is not bytes or zlib")
    }
    if (t.shape.count(_ < 0) < 2) {
      unsupported(path, t.connector,
        s"an encoded tensor of shape ${shapeText(t)} (at most one unknown dimension) is stored " +
          "as one bytes value under its own name, which spark-tfrecord does not decode; only " +
          "encoded tensors with more than one unknown dimension (`x/value` and `x/shape`) are")
    }
    if (!EncodedTensor.Elements.contains(t.dtype)) {
      unsupported(path, t.connector,
        s"an encoded tensor of dtype ${t.dtype} has no Spark type (supported: " +
          EncodedTensor.Elements.keys.toSeq.sorted.mkString(", ") + ")")
    }
  }

  /**
   * Where `given` and `existing` differ, as a feature path and both sides (`None`: the same
   * features). A FeaturesDict's keys are compared as a set: TFDS keeps them in a protobuf map,
   * whose JSON lists them in an order that changes from one Python process to the next.
   */
  def difference(given: TFDSFeature, existing: TFDSFeature, path: String = ""): Option[String] =
    (given, existing) match {
      case (Dict(g), Dict(e)) =>
        val (gm, em) = (g.toMap, e.toMap)
        val keys = (g.map(_._1) ++ e.map(_._1)).distinct.sorted
        keys.iterator.map { k =>
          (gm.get(k), em.get(k)) match {
            case (Some(a), Some(b)) => difference(a, b, join(path, k))
            case (a, _) =>
              val side = if (a.isDefined) "given only" else "in the folder only"
              Some(s"'${join(path, k)}' is $side")
          }
        }.collectFirst { case Some(d) => d }
      case (Sequence(g, gc), Sequence(e, ec)) if gc == ec => difference(g, e, path)
      case _ if given == existing => None
      case _ => Some(s"'$path' is $given given, $existing in the folder")
    }

  private def join(path: String, key: String): String = if (path.isEmpty) key else s"$path/$key"

  private def invalid(path: String, why: String): TFRecordArgumentException =
    TFRecordError.argument(TFRecordError.TfdsFeatures,
      s"Invalid TFDS features${if (path.isEmpty) "" else s" at '$path'"}: $why")

  private def unsupported(path: String, connector: String, why: String): Nothing =
    throw TFRecordError.argument(TFRecordError.TfdsFeatures,
      s"TFDS feature '$path' (${connector}) is not supported: $why.")

  /** The Spark type of a stored tensor: the [[TypeTable]]'s for its dtype; a string for Text. */
  private def sparkType(t: Tensor, path: String): DataType = t.connector match {
    case "Text" => StringType
    case _ => TypeTable.fromTfdsDtype(t.dtype).map(_.dataType)
        .getOrElse(unsupported(path, t.connector, s"dtype ${t.dtype} has no TFRecord list"))
  }

  /**
   * A chain of sequences ending in a tensor: its depth (`Sequence(Sequence(t))` is 2) and the
   * tensor; None for a sequence of dicts, or of sequences of dicts.
   */
  private def nested(s: Sequence): Option[(Int, Tensor)] = s.feature match {
    case t: Tensor => Some((1, t))
    case inner: Sequence => nested(inner).map { case (d, t) => (d + 1, t) }
    case _ => None
  }

  private def shapeText(t: Tensor): String =
    t.shape.map(d => if (d < 0) "None" else d.toString).mkString("(", ", ", ")")

  /**
   * Refuses, by name, a sequence of `depth` levels of `t` (in a sequence of dicts when
   * `inSequence`) that no Spark type holds as TFDS stores it. Two sequence levels or more are
   * stored ragged: row lengths per level, the values of the innermost tensors in
   * `ragged_flat_values`.
   */
  private def checkSequence(
      path: String,
      s: Sequence,
      depth: Int,
      t: Tensor,
      inSequence: Boolean): Unit = {
    if (t.shape.contains(-1L)) {
      // TFDS stacks the elements into one array: it fails itself on elements of two shapes.
      unsupported(path, s.connector,
        s"a sequence of ${t.connector} of shape ${shapeText(t)} has an unknown dimension in " +
          "each element, which TFDS stores only when every element has the same shape")
    }
    if (t.shape.nonEmpty && depth + (if (inSequence) 1 else 0) >= 2) {
      unsupported(path, s.connector,
        s"a ${t.connector} of shape ${shapeText(t)} at the bottom of a nested sequence is " +
          "stored ragged with row lengths that count tensors, while spark-tfrecord's ragged " +
          "lists count values; only scalars are supported there")
    }
  }

  private def nestedArray(element: DataType, depth: Int): DataType = {
    var t = element
    (1 to depth).foreach(_ => t = ArrayType(t, containsNull = false))
    t
  }

  /**
   * The Spark schema of a dataset of `features` (see the table above). `classNames` holds the
   * class names of ClassLabel features by feature path, put into their fields' metadata.
   */
  def schema(features: Dict, classNames: Map[String, Seq[String]]): StructType = {
    def field(name: String, f: TFDSFeature, path: String, inSequence: Boolean): StructField =
      f match {
        case Dict(fields) =>
          StructField(name,
            StructType(fields.map { case (k, v) =>
              field(k, v, join(path, k), inSequence)
            }), nullable = true)
        case Sequence(Dict(fields), connector) =>
          if (inSequence) dictInSequence(path, connector)
          val element = StructType(fields.map { case (k, v) => field(k, v, join(path, k), true) })
          val meta = if (connector == "Sequence") Metadata.empty
          else new MetadataBuilder().putString(ConnectorKey, connector).build()
          StructField(name, ArrayType(element, containsNull = false), nullable = true, meta)
        case s: Sequence =>
          val (depth, t) = nested(s).getOrElse(dictInSequence(path, s.connector))
          checkSequence(path, s, depth, t, inSequence)
          StructField(name, nestedArray(sparkType(t, path), depth), nullable = true,
            metadata(t, classNames.get(path), 0))
        case t: Tensor if t.encoded =>
          if (inSequence || path.contains("/")) {
            unsupported(path, t.connector,
              "an encoded tensor is supported only as a top-level feature")
          }
          StructField(name, EncodedTensor.sparkType(t.dtype, t.shape.length), nullable = true,
            encodedMetadata(Metadata.empty, t))
        case t: Tensor =>
          if (t.shape.drop(1).contains(-1L)) {
            unsupported(path, t.connector,
              s"shape ${shapeText(t)} has an unknown dimension after the first, which TFDS " +
                "infers from the number of values; spark-tfrecord does not (not implemented)")
          }
          if (inSequence && t.shape.contains(-1L)) {
            unsupported(path, t.connector,
              s"shape ${shapeText(t)} inside a Sequence has an unknown dimension in each " +
                "element, which TFDS stores only when every element has the same shape")
          }
          val element = sparkType(t, path)
          val dataType = if (t.shape.isEmpty) element else ArrayType(element, containsNull = false)
          val length = if (t.shape.nonEmpty && !t.shape.contains(-1L)) t.values.toInt else 0
          StructField(name, dataType, nullable = true, metadata(t, classNames.get(path), length))
      }
    StructType(features.fields.map { case (k, v) => field(k, v, k, inSequence = false) })
  }

  private def dictInSequence(path: String, connector: String): Nothing =
    unsupported(path, connector,
      "a sequence of dicts inside a sequence has no feature layout (an array of structs " +
        "inside an array, which TFDS stores as ragged leaves under one name)")

  private def encodedMetadata(base: Metadata, t: Tensor): Metadata =
    new MetadataBuilder().withMetadata(base).remove(FeaturePaths.ListLengthKey)
      .putString(ConnectorKey, t.connector)
      .putString(FeaturePaths.TensorEncodingKey, t.encoding)
      .putString(FeaturePaths.TensorDtypeKey, t.dtype).build()

  private def metadata(t: Tensor, names: Option[Seq[String]], listLength: Int): Metadata = {
    val b = new MetadataBuilder().putString(ConnectorKey, t.connector)
    names.foreach(n => b.putStringArray(ClassNamesKey, n.toArray))
    if (listLength > 0) b.putLong(FeaturePaths.ListLengthKey, listLength)
    b.build()
  }

  /**
   * `schema` with the metadata of `features` on its fields, after checking that it can be
   * written as them: every feature a column (and no other column), each of a type that holds
   * it. Fails naming the column.
   */
  def check(schema: StructType, features: Dict): StructType = {
    def struct(s: StructType, fields: Seq[(String, TFDSFeature)], prefix: String,
        inSequence: Boolean): StructType = {
      val byName = fields.toMap
      s.fields.find(f => !byName.contains(f.name)).foreach { f =>
        throw TFRecordError.argument(TFRecordError.TfdsFeatures,
          s"Column '$prefix${f.name}' is not a feature of the " +
            s"dataset (its features: ${fields.map(_._1).mkString(", ")}).")
      }
      val names = s.fieldNames.toSet
      fields.find(f => !names(f._1)).foreach { case (k, _) =>
        throw TFRecordError.argument(TFRecordError.TfdsFeatures,
          s"The dataset's feature '$prefix$k' has no column in the DataFrame.")
      }
      StructType(s.fields.map(f => field(f, byName(f.name), prefix + f.name, inSequence)))
    }
    def field(f: StructField, feature: TFDSFeature, column: String, inSequence: Boolean)
        : StructField = (f.dataType, feature) match {
      case (s: StructType, Dict(fields)) =>
        f.copy(dataType = struct(s, fields, column + ".", inSequence))
      case (ArrayType(s: StructType, n), Sequence(Dict(fields), connector)) =>
        if (inSequence) dictInSequence(column, connector)
        f.copy(dataType = ArrayType(struct(s, fields, column + ".", inSequence = true), n))
      case (t, s: Sequence) if nested(s).exists { case (d, tensor) =>
          elementAt(t, d).exists(holds(_, tensor))
        } =>
        val (depth, tensor) = nested(s).get
        checkSequence(column, s, depth, tensor, inSequence)
        // Stored ragged (or, at the top, as one list): never the concatenation of fixed lists.
        f.copy(metadata = new MetadataBuilder().withMetadata(f.metadata)
          .remove(FeaturePaths.ListLengthKey).putString(ConnectorKey, s.connector).build())
      case (t, tensor: Tensor) if tensor.encoded =>
        if (inSequence || column.contains(".")) {
          unsupported(column, tensor.connector,
            "an encoded tensor is supported only as a top-level feature")
        }
        val expected = EncodedTensor.sparkType(tensor.dtype, tensor.shape.length)
        if (!DataType.equalsIgnoreNullability(t, expected)) {
          throw TFRecordError.argument(TFRecordError.TfdsFeatures,
            s"Column '$column' has type ${t.simpleString}, which cannot be written as the TFDS " +
              s"feature ${describe(tensor)}: its type is ${expected.simpleString}.",
            "column" -> column)
        }
        f.copy(metadata = encodedMetadata(f.metadata, tensor))
      case (t, tensor: Tensor) if tensor.shape.isEmpty && holds(t, tensor) =>
        f.copy(metadata = new MetadataBuilder().withMetadata(f.metadata)
          .putString(ConnectorKey, tensor.connector).build())
      case (ArrayType(e, _), tensor: Tensor)
        if tensor.shape.nonEmpty && holds(e, tensor) &&
          !tensor.shape.drop(1).contains(-1L) && !(inSequence && tensor.shape.contains(-1L)) =>
        val b = new MetadataBuilder().withMetadata(f.metadata)
          .putString(ConnectorKey, tensor.connector)
        if (!tensor.shape.contains(-1L)) b.putLong(FeaturePaths.ListLengthKey, tensor.values)
        f.copy(metadata = b.build())
      case (t, expected) =>
        throw TFRecordError.argument(TFRecordError.TfdsFeatures,
          s"Column '$column' has type ${t.simpleString}, " +
            s"which cannot be written as the TFDS feature ${describe(expected)}" +
            (if (inSequence) " inside a Sequence" else "") + ".", "column" -> column)
    }
    struct(schema, features.fields, "", inSequence = false)
  }

  /** The element of `t` under exactly `depth` arrays (not an array itself), if it has one. */
  private def elementAt(t: DataType, depth: Int): Option[DataType] = (t, depth) match {
    case (_: ArrayType, 0) => None
    case (e, 0) => Some(e)
    case (ArrayType(e, _), d) => elementAt(e, d - 1)
    case _ => None
  }

  /**
   * Whether a column (or element) of type `t` holds the values of `tensor`: encoded media only
   * as binary, Text as a string or binary, else as the [[TypeTable]] says.
   */
  private def holds(t: DataType, tensor: Tensor): Boolean = tensor.connector match {
    case "Image" | "Video" | "Audio" if tensor.dtype == "string" => t == BinaryType
    case "Text" if t == StringType || t == BinaryType => true
    case _ => TypeTable.entry(t).exists(_.holdsTfds(tensor.dtype))
  }

  private def describe(f: TFDSFeature): String = f match {
    case _: Dict => "FeaturesDict (a struct)"
    case Sequence(_: Dict, c) => s"$c of a FeaturesDict (an array of structs)"
    case s: Sequence => nested(s) match {
        case Some((1, t)) => s"${s.connector} of ${describe(t)} (an array)"
        case Some((d, t)) =>
          s"${s.connector} of ${Seq.fill(d - 1)("Sequence of ").mkString}${describe(t)} " +
            s"($d nested arrays)"
        case None => s"${s.connector} of sequences of dicts"
      }
    case t: Tensor =>
      val shape = if (t.shape.isEmpty) "a scalar" else s"shape ${shapeText(t)}"
      s"${t.connector} ($shape of ${t.dtype})"
  }

  /**
   * The features of a DataFrame written without them: integers int64, float and double float32,
   * boolean bool, string `Text`, binary a string `Tensor`, arrays of those shape `(None,)`,
   * structs `FeaturesDict`, arrays of structs `Sequence`; arrays of arrays, and arrays in an
   * array of structs, `Sequence`s of a scalar, one per level (stored ragged), but a field with
   * a fixed length ([[FeaturePaths.ListLengthKey]]), a `Tensor` of that shape. Fails naming a
   * column that has none.
   */
  def fromSchema(schema: StructType): Dict = {
    def feature(t: DataType, column: String, inSequence: Boolean, length: Int,
        meta: Metadata = Metadata.empty): TFDSFeature =
      t match {
        case _ if meta.contains(FeaturePaths.TensorEncodingKey) && !inSequence =>
          Tensor("Tensor", meta.getString(FeaturePaths.TensorDtypeKey),
            Seq.fill(TypeTable.depth(t))(-1L), meta.getString(FeaturePaths.TensorEncodingKey))
        case s: StructType => Dict(s.fields.map(f =>
            f.name -> feature(f.dataType, if (column.isEmpty) f.name else s"$column.${f.name}",
              inSequence, FeaturePaths.listLength(f), f.metadata)).toSeq)
        case ArrayType(s: StructType, _) if !inSequence =>
          Sequence(feature(s, column, inSequence = true, 0))
        case ArrayType(e, _) if !e.isInstanceOf[ArrayType] && (!inSequence || length > 0) =>
          val shape = Seq(if (inSequence) length.toLong else -1L)
          scalar(e, column) match {
            case Tensor("Text", _, _, _) => Tensor("Tensor", "string", shape)
            case Tensor(c, d, _, _) => Tensor(c, d, shape)
          }
        case ArrayType(e, _) => Sequence(feature(e, column, inSequence = true, 0) match {
            case _: Dict => throw TFRecordError.argument(TFRecordError.TfdsFeatures,
                s"Column '$column' holds arrays of structs inside an array: TFDS's sequence of " +
                  "dicts inside a sequence has no feature layout.", "column" -> column)
            case inner => inner
          })
        case other => scalar(other, column)
      }
    def scalar(t: DataType, column: String): Tensor =
      TypeTable.entry(t).flatMap(e => e.tfdsDtype.map(Tensor(e.tfdsConnector, _, Nil)))
        .getOrElse(throw TFRecordError.argument(TFRecordError.TfdsFeatures,
          s"Column '$column' has type ${t.simpleString}, which has no TFDS feature that " +
            "decodes back to it. Cast it (to bigint, double or string), or give features=.",
          "column" -> column))
    feature(schema, "", inSequence = false, 0) match {
      case d: Dict => Dict(d.fields.map { case (k, v) => k -> v })
      case _ => throw new IllegalStateException("a schema is a struct")
    }
  }

  /** `features` as `features.json` holds it: the proto JSON TFDS writes and reads. */
  def toJson(features: Dict): String = {
    def node(feature: TFDSFeature): Json = feature match {
      case Dict(fields) => Json.obj(
          "pythonClassName" -> Json.str(Module + "features_dict.FeaturesDict"),
          "featuresDict" -> Json.obj("features" -> Json.Obj(fields.toVector.map {
            case (k, v) => k -> node(v)
          })))
      case Sequence(inner, connector) => Json.obj(
          "pythonClassName" -> Json.str(Module +
            (if (connector == "Dataset") "dataset_feature.Dataset"
             else "sequence_feature.Sequence")),
          "sequence" -> Json.obj("feature" -> node(inner), "length" -> Json.str("-1")))
      case Tensor("Text", _, _, _) =>
        Json.obj("pythonClassName" -> Json.str(Module + "text_feature.Text"), "text" -> Json.obj())
      case Tensor(_, dtype, shape, encoding) =>
        val dims =
          if (shape.isEmpty) Json.obj()
          else Json.obj("dimensions" -> Json.arr(shape.map(d => Json.str(d.toString))))
        Json.obj(
          "pythonClassName" -> Json.str(Module + "tensor_feature.Tensor"),
          "tensor" -> Json.obj("shape" -> dims, "dtype" -> Json.str(dtype),
            "encoding" -> Json.str(encoding)))
    }
    node(features).indented
  }

  /** The paths of the ClassLabel features (`objects/label`), for their `.labels.txt` files. */
  def classLabels(features: Dict): Seq[String] = {
    def walk(f: TFDSFeature, path: String): Seq[String] = f match {
      case Dict(fields) => fields.flatMap { case (k, v) => walk(v, join(path, k)) }
      case Sequence(inner, _) => walk(inner, path)
      case Tensor("ClassLabel", _, _, _) => Seq(path)
      case _ => Nil
    }
    walk(features, "")
  }

  /**
   * The file TFDS keeps a ClassLabel's names in, `<name>.labels.txt`, for the feature at `path`:
   * its parents' names joined with `-` (`objects-label.labels.txt`).
   */
  def labelsFile(path: String): String = path.replace('/', '-') + ".labels.txt"
}
