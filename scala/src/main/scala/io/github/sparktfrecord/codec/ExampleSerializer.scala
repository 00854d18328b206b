package io.github.sparktfrecord.codec

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.framing.{RecordBuffer, TFRecordFraming}
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Turns rows into serialized `tf.train.Example` (or `SequenceExample`) messages.
 *
 * One encoder per feature is chosen when the serializer is built; per row, a first pass sizes every
 * present feature (protobuf prefixes each message with its length), a second writes them into one
 * reused buffer. The message is written at [[TFRecordFraming.HeaderBytes]] so the framing can be
 * added around it without a copy.
 *
 * In a SequenceExample, `array<array<T>>` columns become feature lists (one Feature per inner
 * array) and all other columns context features.
 *
 * Struct columns and arrays of structs are written as path-named features ([[FeaturePaths]]):
 * the structs on the way to each feature are found once per row (viewed in place, without
 * allocating), and an array of structs is read through one [[ElementFieldArray]] per feature.
 *
 * In an Example, a list of lists (`array<array<…<T>>>`, a column or a leaf, one of an array of
 * structs's elements being one list) is written ragged, as TensorFlow Datasets writes a ragged
 * tensor ([[FeaturePaths.raggedNames]]): its features are read through a [[RaggedView]] each,
 * written by the encoders of plain arrays.
 *
 * With `sparseVectors` (the option `vectorLayout` `sparse`), a vector column is written as
 * `tf.io.SparseFeature` reads it: three features, its positions, values and size
 * ([[FeaturePaths.VectorParts]]).
 *
 * An encoded tensor column ([[FeaturePaths.TensorEncodingKey]]) is written as TFDS stores a
 * `Tensor` with an encoding and a dynamic shape, by an [[EncodedTensorEncoder]].
 *
 * With `requireValues` (a TensorFlow Datasets write, whose features have no null), a null value
 * fails naming its column instead of leaving its feature out. An array column whose field fixes
 * its length ([[FeaturePaths.ListLengthKey]]) fails when a row's array holds another number.
 */
private[sparktfrecord] final class ExampleSerializer(
    schema: StructType,
    recordType: RecordType,
    separator: String = FeaturePaths.DefaultSeparator,
    requireValues: Boolean = false,
    sparseVectors: Boolean = false)
  extends RecordSerializer {
  import ProtoWire._

  private val sequence = recordType == RecordType.SequenceExample
  private val leaves =
    FeaturePaths.leaves(schema, recordType, separator, sparseVectors, splitRagged = true)
  private val numLeaves = leaves.length
  private val keys: Array[Array[Byte]] = leaves.map(_.name.getBytes(UTF_8)).toArray
  /** Whether feature i goes to SequenceExample.feature_lists rather than the features/context. */
  private val inLists: Array[Boolean] = leaves.map { l =>
    sequence &&
      (l.dataType match {
        case ArrayType(ArrayType(_, _), _) => true
        case _ => false
      })
  }.toArray
  /** Per encoded tensor column, the encoder its two features share. */
  private val tensorEncoders: Map[String, EncodedTensorEncoder] =
    leaves.filter(_.tensorPart == FeaturePaths.TensorValue).map { l =>
      l.column -> new EncodedTensorEncoder(l.column,
        EncodedTensor.check(l.tensor, l.dataType, l.column), EncodedTensor.element(l.tensor),
        EncodedTensor.encoding(l.tensor) == "zlib")
    }.toMap
  private val encoders: Array[ValueEncoder] = leaves.map { l =>
    l.dataType match {
      // x/value is measured before x/shape, which gives the sizes it found.
      case _ if l.tensorPart == FeaturePaths.TensorValue => tensorEncoders(l.column).value
      case _ if l.tensorPart == FeaturePaths.TensorShape => tensorEncoders(l.column).shape
      case ArrayType(step @ ArrayType(_, _), _) if sequence =>
        val stepType = if (l.inArrayOfStructs) l.leafType else step
        new FeatureListEncoder(l.column, FeatureEncoder(l.column, stepType))
      case _ if l.vectorPart != 0 => FeatureEncoder.sparseVector(l.column, l.vectorPart)
      case t if l.raggedLevel >= 0 =>
        if (l.raggedLevel < TypeTable.depth(t) - 1) FeatureEncoder(l.column, ArrayType(LongType))
        else FeatureEncoder(l.column, ArrayType(TypeTable.innermost(t)))
      case t => FeatureEncoder(l.column, t)
    }
  }.toArray

  /** The struct fields leaves are in, each after the struct that holds it. */
  private val structs: IndexedSeq[Seq[FeaturePaths.Step]] =
    leaves.flatMap(l => l.structs.indices.map(d => l.structs.take(d + 1))).distinct
  private val numStructs = structs.length
  /** Per struct: the struct that holds it (-1: the row), its ordinal there, and its view. */
  private val structParents: Array[Int] =
    structs.map(p => if (p.length == 1) -1 else structs.indexOf(p.init)).toArray
  private val structOrdinals: Array[Int] = structs.map(_.last.ordinal).toArray
  private val structViews: Array[StructView] =
    structs.map(p => new StructView(p.last.struct.length)).toArray
  /** Per row: each struct, or null when it (or one it is in) is null. */
  private val structRows = new Array[InternalRow](numStructs)

  /** Per feature: the struct holding its value (-1: the row), and the value's ordinal there. */
  private val parents: Array[Int] =
    leaves.map(l => if (l.structs.isEmpty) -1 else structs.indexOf(l.structs)).toArray
  private val ordinals: Array[Int] = leaves.map(_.ordinal).toArray
  /** A feature of an array of structs: the array, its view, and a row holding the view at 0. */
  private val arrayViews: Array[ArrayView] =
    leaves.map(l => if (l.inArrayOfStructs) new ArrayView else null).toArray
  private val elementFields: Array[ElementFieldArray] =
    leaves.map(l => if (l.inArrayOfStructs) new ElementFieldArray(l) else null).toArray
  private val elementFieldRows: Array[InternalRow] =
    elementFields.map(f => if (f == null) null else new GenericInternalRow(Array[Any](f)))

  /** A ragged feature: the view of its lists' lengths or values, and a row holding it at 0. */
  private val raggedViews: Array[RaggedView] = leaves.map { l =>
    if (l.raggedLevel < 0) null
    else {
      val depth = TypeTable.depth(l.dataType)
      val nest = new RaggedNest(l.column, depth)
      if (l.raggedLevel < depth - 1) new RaggedRowLengths(nest, l.raggedLevel)
      else new RaggedFlatValues(nest)
    }
  }.toArray
  private val raggedRows: Array[InternalRow] =
    raggedViews.map(v => if (v == null) null else new GenericInternalRow(Array[Any](v)))
  /** A ragged column's list of lists, read in place. */
  private val listViews: Array[ArrayView] =
    leaves.map(l => if (l.raggedLevel >= 0 && !l.inArrayOfStructs) new ArrayView else null)
      .toArray

  /** Per row: the row (or struct) each present feature's value is read from, and its ordinal. */
  private val valueRows = new Array[InternalRow](numLeaves)
  private val valueOrdinals: Array[Int] =
    leaves.map(l => if (l.inArrayOfStructs || l.raggedLevel >= 0) 0 else l.ordinal).toArray
  /** Per row: the size of each present feature's entry value, -1 for an absent one. */
  private val valueSizes = new Array[Int](numLeaves)
  /** Per feature: the number of values its array must hold (0: any), and a view to count them. */
  private val fixedLengths: Array[Int] =
    leaves.map { l =>
      if (l.inArrayOfStructs || sequence || l.raggedLevel >= 0) 0 else l.listLength
    }.toArray
  private val lengthViews: Array[ArrayView] =
    fixedLengths.map(n => if (n > 0) new ArrayView else null)

  /** Per feature: the fewest and most values one record held so far (absent: 0 values). */
  private val fewest = Array.fill(numLeaves)(Int.MaxValue)
  private val most = new Array[Int](numLeaves)
  /** Per feature list: the fewest and most values one of its steps held so far. */
  private val stepFewest = Array.fill(numLeaves)(Int.MaxValue)
  private val stepMost = new Array[Int](numLeaves)

  /**
   * What the rows serialized so far held: per feature (Example.features or the
   * SequenceExample's context) and per feature list (the values of one step), the fewest and
   * most values, as a write's manifest keeps them. Empty before the first row.
   */
  override def valueCounts: RecordSerializer.ValueCounts = {
    def of(in: Boolean, lo: Array[Int], hi: Array[Int]) = leaves.indices
      .filter(i => inLists(i) == in && lo(i) != Int.MaxValue)
      .map(i => leaves(i).name -> (lo(i), hi(i))).toMap
    RecordSerializer.ValueCounts(of(in = false, fewest, most), of(in = true, stepFewest, stepMost))
  }

  private def counted(i: Int, values: Int): Unit = {
    if (values < fewest(i)) fewest(i) = values
    if (values > most(i)) most(i) = values
  }

  private def countedSteps(i: Int): Unit = {
    val list = encoders(i).asInstanceOf[FeatureListEncoder]
    if (list.valueCount > 0) {
      if (list.stepMin < stepFewest(i)) stepFewest(i) = list.stepMin
      if (list.stepMax > stepMost(i)) stepMost(i) = list.stepMax
    }
  }

  def serialize(row: InternalRow): Int = {
    var s = 0
    while (s < numStructs) {
      val parent = if (structParents(s) < 0) row else structRows(structParents(s))
      structRows(s) = if (parent == null || parent.isNullAt(structOrdinals(s))) null
      else structViews(s)(parent, structOrdinals(s))
      s += 1
    }
    var featuresSize = 0L // Example.features, or SequenceExample.context
    var listsSize = 0L // SequenceExample.feature_lists
    var i = 0
    while (i < numLeaves) {
      val values = valueRow(row, i)
      if (values == null) {
        if (requireValues) absent(i)
        valueSizes(i) = -1
        if (!inLists(i)) counted(i, 0)
      } else {
        if (fixedLengths(i) > 0) checkLength(i, values)
        val valueSize = encoders(i).measure(values, valueOrdinals(i))
        valueSizes(i) = valueSize
        val fieldSize = lengthDelimitedSize(entrySize(i, valueSize))
        if (inLists(i)) {
          listsSize += fieldSize
          countedSteps(i)
        } else {
          featuresSize += fieldSize
          counted(i, encoders(i).valueCount)
        }
      }
      i += 1
    }
    val total = RecordSerializer.checkedSize(
      (if (!sequence || featuresSize > 0) lengthDelimitedSize(featuresSize) else 0L) +
        (if (listsSize > 0) lengthDelimitedSize(listsSize) else 0L),
      column = null)
    val buf = reserve(total)
    var p = TFRecordFraming.HeaderBytes
    if (!sequence || featuresSize > 0) {
      p = writeTagAndLength(buf, p, 1, featuresSize) // Example.features / SequenceExample.context
      p = writeEntries(buf, p, lists = false)
    }
    if (listsSize > 0) {
      p = writeTagAndLength(buf, p, 2, listsSize) // SequenceExample.feature_lists
      p = writeEntries(buf, p, lists = true)
    }
    total
  }

  /** Where feature i's value is read from in this row (kept in valueRows); null when absent. */
  private def valueRow(row: InternalRow, i: Int): InternalRow = {
    val parent = if (parents(i) < 0) row else structRows(parents(i))
    val values = if (parent == null || parent.isNullAt(ordinals(i))) null
    else if (raggedViews(i) != null) {
      raggedViews(i).point(
        if (elementFields(i) == null) listViews(i)(parent, ordinals(i))
        else {
          elementFields(i).point(arrayViews(i)(parent, ordinals(i)))
          elementFields(i)
        })
      raggedRows(i)
    } else if (elementFields(i) == null) parent
    else {
      elementFields(i).point(arrayViews(i)(parent, ordinals(i)))
      elementFieldRows(i)
    }
    valueRows(i) = values
    values
  }

  private def absent(i: Int): Nothing = throw TFRecordError.writeError(
    TFRecordError.DataMismatch,
    leaves(i).column,
    s"Column '${leaves(i).column}' is null in a row, and a TensorFlow Datasets feature has no " +
      "null (its parser fails on a record without it). Drop or fill the nulls first.")

  private def checkLength(i: Int, values: InternalRow): Unit = {
    val n = lengthViews(i)(values, valueOrdinals(i)).numElements()
    if (n != fixedLengths(i)) {
      throw TFRecordError.writeError(TFRecordError.DataMismatch, leaves(i).column,
        s"Column '${leaves(i).column}' holds an array of $n values in a row, but its values " +
          s"have a fixed shape of ${fixedLengths(i)} (${FeaturePaths.ListLengthKey}).")
    }
  }

  /** A map entry's content: { key = 1, value = 2 }. */
  private def entrySize(column: Int, valueSize: Int): Long =
    lengthDelimitedSize(keys(column).length) + lengthDelimitedSize(valueSize)

  /** The map entries { key = 1, value = 2 } of the present features of one map. */
  private def writeEntries(buf: Array[Byte], pos: Int, lists: Boolean): Int = {
    var p = pos
    var i = 0
    while (i < numLeaves) {
      val valueSize = valueSizes(i)
      if (valueSize >= 0 && inLists(i) == lists) {
        val key = keys(i)
        // Features.feature / FeatureLists.feature_list
        p = writeTagAndLength(buf, p, 1, entrySize(i, valueSize))
        p = writeTagAndLength(buf, p, 1, key.length) // key
        System.arraycopy(key, 0, buf, p, key.length)
        p += key.length
        p = writeTagAndLength(buf, p, 2, valueSize) // value: a Feature or a FeatureList
        p = encoders(i).write(valueRows(i), valueOrdinals(i), valueSize, buf, p)
      }
      i += 1
    }
    p
  }
}

/** Serializes a row into a reused buffer, leaving room for the TFRecord framing around it. */
private[sparktfrecord] abstract class RecordSerializer {
  private val record = new RecordBuffer

  /** The record after [[serialize]]: its data at `[HeaderBytes, HeaderBytes + length)`. */
  final def buffer: Array[Byte] = record.bytes

  /** Serializes `row` into [[buffer]] and returns the data length. */
  def serialize(row: InternalRow): Int

  /** The numbers of values the rows serialized so far held per feature (none: no features). */
  def valueCounts: RecordSerializer.ValueCounts = RecordSerializer.ValueCounts.None

  /** Makes room for `length` data bytes plus framing; returns the buffer. */
  protected final def reserve(length: Int): Array[Byte] = record.reserve(length)
}

private[sparktfrecord] object RecordSerializer {

  /**
   * Per feature key, the fewest and most values one record held (`features`: Example.features or
   * a SequenceExample's context, a record without the feature counting 0), and per feature list
   * the fewest and most values one step held (`lists`).
   */
  final case class ValueCounts(features: Map[String, (Int, Int)], lists: Map[String, (Int, Int)])

  object ValueCounts {
    val None: ValueCounts = ValueCounts(Map.empty, Map.empty)
  }

  /** The most data bytes a written record holds: framed, it must fit in one byte array. */
  final val MaxDataBytes: Int =
    TFRecordFraming.MaxRecordBytes - TFRecordFraming.OverheadBytes

  /**
   * `size` bytes, of a record or of a column's part of one, as an Int when one record can hold
   * them; else an error naming `column` (null: the whole row). Every size a write computes is
   * summed in a Long and checked here, so that none wraps.
   */
  def checkedSize(size: Long, column: String): Int = {
    if (size > MaxDataBytes) tooLarge(size, column)
    size.toInt
  }

  // Out of line, so that checkedSize stays small enough to inline.
  private def tooLarge(size: Long, column: String): Nothing = {
    val what = if (column == null) "Row" else s"Column '$column'"
    throw TFRecordError.writeError(TFRecordError.RecordTooLarge, column,
      s"$what too large for one TFRecord: $size bytes, at most $MaxDataBytes fit in one record")
  }
}

/** `recordType` ByteArray: the one binary column is the record. */
private[sparktfrecord] final class ByteArraySerializer(column: String) extends RecordSerializer {
  def serialize(row: InternalRow): Int = {
    if (row.isNullAt(0)) {
      throw TFRecordError.writeError(TFRecordError.DataMismatch, column,
        s"Column '$column' is null in a row: recordType ByteArray writes each value as one " +
          "record and has nothing to write for a null. Filter the nulls out first.")
    }
    val b = row.getBinary(0)
    val length = RecordSerializer.checkedSize(b.length, column)
    System.arraycopy(b, 0, reserve(length), TFRecordFraming.HeaderBytes, length)
    length
  }
}
