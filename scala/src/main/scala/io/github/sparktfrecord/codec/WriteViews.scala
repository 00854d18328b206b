package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.TFRecordError

// The views through which the write path (ExampleSerializer) reads nested columns in place.

/**
 * A struct field of a row or an array element, read without allocating: an [[UnsafeRow]] pointed
 * at the struct's bytes when its container is unsafe (as the rows of a write are), else Spark's
 * `getStruct`. What it returns is valid until the next call.
 */
private[sparktfrecord] final class StructView(numFields: Int) {
  private val view = new UnsafeRow(numFields)

  def apply(container: SpecializedGetters, ordinal: Int): InternalRow = container match {
    case r: UnsafeRow => point(r.getBaseObject, r.getBaseOffset, r.getLong(ordinal))
    case a: UnsafeArrayData => point(a.getBaseObject, a.getBaseOffset, a.getLong(ordinal))
    case _ => container.getStruct(ordinal, numFields)
  }

  private def point(base: AnyRef, baseOffset: Long, slot: Long): InternalRow = {
    view.pointTo(base, UnsafeSlot.offset(baseOffset, slot), UnsafeSlot.size(slot))
    view
  }
}

/** An array field read without allocating, as [[StructView]] reads a struct. */
private[sparktfrecord] final class ArrayView {
  private val view = new UnsafeArrayData

  def apply(container: SpecializedGetters, ordinal: Int): ArrayData = container match {
    case r: UnsafeRow => point(r.getBaseObject, r.getBaseOffset, r.getLong(ordinal))
    case a: UnsafeArrayData => point(a.getBaseObject, a.getBaseOffset, a.getLong(ordinal))
    case _ => container.getArray(ordinal)
  }

  private def point(base: AnyRef, baseOffset: Long, slot: Long): ArrayData = {
    view.pointTo(base, UnsafeSlot.offset(baseOffset, slot), UnsafeSlot.size(slot))
    view
  }
}

/**
 * One leaf of an array of structs seen as an array of its own: element i is the leaf of the
 * array's element i. The serializer writes it with the encoders of plain arrays: a list of one
 * value per element (Example), or one step per element (SequenceExample).
 *
 * A concatenated leaf ([[FeaturePaths.Leaf.concatenated]]) is seen as the values of every
 * element's list, one after the other: value j is value `j % k` of element `j / k`'s list.
 *
 * [[point]] fails, naming the leaf and the element, when an element, a struct on the way to the
 * leaf, or the leaf is null: a list or a feature list has no place for a null; and when a
 * concatenated leaf's list does not hold exactly its `listLength` values.
 */
private[sparktfrecord] final class ElementFieldArray(leaf: FeaturePaths.Leaf)
  extends GenericArrayData(Array.empty[Any]) {
  private val elementView = new StructView(leaf.element.length)
  private val path: Array[Int] = leaf.inElement.map(_.ordinal).toArray
  private val views: Array[StructView] = leaf.inElement.map(s => new StructView(s.struct.length))
    .toArray
  private val ordinal = leaf.elementOrdinal
  /** Values per element: 0 unless the leaf is concatenated. */
  private val k = if (leaf.concatenated) leaf.listLength else 0
  private val listView = new ArrayView
  private var elements: ArrayData = _
  private var count = 0

  /** Views the leaf across the elements of `array`. */
  def point(array: ArrayData): Unit = {
    elements = array
    count = array.numElements()
    var i = 0
    while (i < count) {
      val r = row(i)
      if (r == null) nullAt(i)
      if (k > 0) checkList(i, listView(r, ordinal))
      i += 1
    }
    if (k > 0) count *= k
  }

  private def checkList(i: Int, list: ArrayData): Unit = {
    if (list.numElements() != k) {
      throw TFRecordError.writeError(TFRecordError.DataMismatch, leaf.column,
        s"Column '${leaf.column}': element $i of its array of structs holds " +
          s"${list.numElements()} values, but this field holds exactly $k per element " +
          s"(${FeaturePaths.ListLengthKey}): the lists of every element are stored as one.")
    }
    var j = 0
    while (j < k) {
      if (list.isNullAt(j)) {
        throw TFRecordError.writeError(TFRecordError.DataMismatch, leaf.column,
          s"Column '${leaf.column}': element $i of its array of structs holds a null at " +
            s"index $j, and a list has no place for a null.")
      }
      j += 1
    }
  }

  /** Value j of a concatenated leaf: the list holding it. */
  private def list(j: Int): ArrayData = listView(row(j / k), ordinal)

  /** The struct that holds element i's leaf, or null when the leaf is null or not reached. */
  private def row(i: Int): InternalRow = {
    if (elements.isNullAt(i)) return null
    var r = elementView(elements, i)
    var d = 0
    while (d < path.length) {
      if (r.isNullAt(path(d))) return null
      r = views(d)(r, path(d))
      d += 1
    }
    if (r.isNullAt(ordinal)) null else r
  }

  private def nullAt(i: Int): Nothing = {
    val what = if (elements.isNullAt(i)) "is null" else "holds a null for this field"
    throw TFRecordError.writeError(TFRecordError.DataMismatch, leaf.column,
      s"Column '${leaf.column}': element $i of its array of structs $what. " +
        "An array of structs is written as one feature per field holding every element's " +
        "value, which has no place for a null. Drop or fill the nulls first.")
  }

  override def numElements(): Int = count
  override def isNullAt(i: Int): Boolean = false
  override def getBoolean(i: Int): Boolean =
    if (k > 0) list(i).getBoolean(i % k) else row(i).getBoolean(ordinal)
  override def getByte(i: Int): Byte =
    if (k > 0) list(i).getByte(i % k) else row(i).getByte(ordinal)
  override def getShort(i: Int): Short =
    if (k > 0) list(i).getShort(i % k) else row(i).getShort(ordinal)
  override def getInt(i: Int): Int = if (k > 0) list(i).getInt(i % k) else row(i).getInt(ordinal)
  override def getLong(i: Int): Long =
    if (k > 0) list(i).getLong(i % k) else row(i).getLong(ordinal)
  override def getFloat(i: Int): Float =
    if (k > 0) list(i).getFloat(i % k) else row(i).getFloat(ordinal)
  override def getDouble(i: Int): Double =
    if (k > 0) list(i).getDouble(i % k) else row(i).getDouble(ordinal)
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal =
    if (k > 0) list(i).getDecimal(i % k, precision, scale)
    else row(i).getDecimal(ordinal, precision, scale)
  override def getUTF8String(i: Int): UTF8String =
    if (k > 0) list(i).getUTF8String(i % k) else row(i).getUTF8String(ordinal)
  override def getBinary(i: Int): Array[Byte] =
    if (k > 0) list(i).getBinary(i % k) else row(i).getBinary(ordinal)
  override def getArray(i: Int): ArrayData = row(i).getArray(ordinal)
}

/**
 * A list of lists of depth d (`array<array<…<T>>>`) of one row, seen as the ragged layout writes
 * it ([[FeaturePaths.raggedNames]]): [[point]] walks it once, keeping the length of every list
 * at each depth (level k: the lists at depth k+1) and the innermost lists, and fails, naming the
 * column and the null's place, on a null list or a null value: the layout has no place for one.
 * The arrays of one row are read through Spark's `getArray`.
 */
private[sparktfrecord] final class RaggedNest(column: String, depth: Int) {
  private val levels = depth - 1
  /** Per level, the lengths of the lists at depth level+1, `counts(level)` of them. */
  val lengths: Array[Array[Long]] = Array.fill(levels)(new Array[Long](16))
  val counts = new Array[Int](levels)
  /** The innermost lists, and where each one's values start among all values (then the end). */
  var inner: Array[ArrayData] = new Array[ArrayData](16)
  var innerStarts = new Array[Int](17)
  var numInner = 0
  var numValues = 0
  /** The indices on the way down, for messages. */
  private val path = new Array[Int](depth)

  /** Walks the lists of `outer`, the outermost list. */
  def point(outer: ArrayData): Unit = {
    java.util.Arrays.fill(counts, 0)
    numInner = 0
    numValues = 0
    innerStarts(0) = 0
    walk(outer, 0)
  }

  private def walk(a: ArrayData, level: Int): Unit = {
    val n = a.numElements()
    var i = 0
    while (i < n) {
      path(level) = i
      if (a.isNullAt(i)) nullAt(level + 1, "list")
      val list = a.getArray(i)
      val m = list.numElements()
      append(level, m)
      if (level + 1 == levels) addInner(list, m) else walk(list, level + 1)
      i += 1
    }
  }

  private def append(level: Int, length: Int): Unit = {
    val c = counts(level)
    if (c == lengths(level).length) {
      lengths(level) = java.util.Arrays.copyOf(lengths(level), 2 * c)
    }
    lengths(level)(c) = length
    counts(level) = c + 1
  }

  private def addInner(list: ArrayData, m: Int): Unit = {
    var j = 0
    while (j < m) {
      if (list.isNullAt(j)) {
        path(levels) = j
        nullAt(depth, "value")
      }
      j += 1
    }
    if (numInner == inner.length) {
      inner = java.util.Arrays.copyOf(inner, 2 * numInner)
      innerStarts = java.util.Arrays.copyOf(innerStarts, 2 * numInner + 1)
    }
    inner(numInner) = list
    numInner += 1
    numValues += m
    innerStarts(numInner) = numValues
  }

  private def nullAt(indices: Int, what: String): Nothing = {
    val where = path.take(indices).mkString("[", "][", "]")
    throw TFRecordError.writeError(TFRecordError.DataMismatch, column,
      s"Column '$column' holds a null $what at $where of its lists of lists in a row: the " +
        "ragged layout (ragged_flat_values and ragged_row_lengths) has no place for a null. " +
        "Drop or fill the nulls first.")
  }
}

/**
 * One feature of a list of lists written ragged, as an array the encoders of plain arrays
 * write: [[RaggedRowLengths]] or [[RaggedFlatValues]]. [[point]] views a row's list of lists.
 */
private[sparktfrecord] sealed abstract class RaggedView(val nest: RaggedNest)
  extends GenericArrayData(Array.empty[Any]) {
  def point(lists: ArrayData): Unit = nest.point(lists)
  override def isNullAt(i: Int): Boolean = false
}

/** `ragged_row_lengths_<level>`: the lengths of the lists at depth level+1, as longs. */
private[sparktfrecord] final class RaggedRowLengths(nest: RaggedNest, level: Int)
  extends RaggedView(nest) {
  override def numElements(): Int = nest.counts(level)
  override def getLong(i: Int): Long = nest.lengths(level)(i)
}

/**
 * `ragged_flat_values`: every value of the innermost lists, in order. The encoders read them in
 * increasing order (twice: measure, write), which a cursor on the innermost list follows.
 */
private[sparktfrecord] final class RaggedFlatValues(nest: RaggedNest) extends RaggedView(nest) {
  /** The innermost list holding the value last asked for. */
  private var c = 0

  override def point(lists: ArrayData): Unit = {
    super.point(lists)
    c = 0
  }

  /** Value i's index in its innermost list, which becomes `c`. */
  private def at(i: Int): Int = {
    if (i < nest.innerStarts(c)) c = 0
    while (i >= nest.innerStarts(c + 1)) c += 1
    i - nest.innerStarts(c)
  }

  override def numElements(): Int = nest.numValues
  override def getBoolean(i: Int): Boolean = { val j = at(i); nest.inner(c).getBoolean(j) }
  override def getByte(i: Int): Byte = { val j = at(i); nest.inner(c).getByte(j) }
  override def getShort(i: Int): Short = { val j = at(i); nest.inner(c).getShort(j) }
  override def getInt(i: Int): Int = { val j = at(i); nest.inner(c).getInt(j) }
  override def getLong(i: Int): Long = { val j = at(i); nest.inner(c).getLong(j) }
  override def getFloat(i: Int): Float = { val j = at(i); nest.inner(c).getFloat(j) }
  override def getDouble(i: Int): Double = { val j = at(i); nest.inner(c).getDouble(j) }
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal = {
    val j = at(i)
    nest.inner(c).getDecimal(j, precision, scale)
  }
  override def getUTF8String(i: Int): UTF8String = { val j = at(i); nest.inner(c).getUTF8String(j) }
  override def getBinary(i: Int): Array[Byte] = { val j = at(i); nest.inner(c).getBinary(j) }
}
