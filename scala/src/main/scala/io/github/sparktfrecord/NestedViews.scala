package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeArrayData, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

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

  // An unsafe container holds (offset << 32 | size) of a struct in its slot.
  private def point(base: AnyRef, baseOffset: Long, offsetAndSize: Long): InternalRow = {
    view.pointTo(base, baseOffset + (offsetAndSize >>> 32), offsetAndSize.toInt)
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

  private def point(base: AnyRef, baseOffset: Long, offsetAndSize: Long): ArrayData = {
    view.pointTo(base, baseOffset + (offsetAndSize >>> 32), offsetAndSize.toInt)
    view
  }
}

/**
 * One leaf of an array of structs seen as an array of its own: element i is the leaf of the
 * array's element i. The serializer writes it with the encoders of plain arrays: a list of one
 * value per element (Example), or one step per element (SequenceExample).
 *
 * [[point]] fails, naming the leaf and the element, when an element, a struct on the way to the
 * leaf, or the leaf is null: a list or a feature list has no place for a null.
 */
private[sparktfrecord] final class ElementFieldArray(leaf: FeaturePaths.Leaf)
  extends GenericArrayData(Array.empty[Any]) {
  private val elementView = new StructView(leaf.element.length)
  private val path: Array[Int] = leaf.inElement.map(_.ordinal).toArray
  private val views: Array[StructView] = leaf.inElement.map(s => new StructView(s.struct.length))
    .toArray
  private val ordinal = leaf.elementOrdinal
  private var elements: ArrayData = _
  private var count = 0

  /** Views the leaf across the elements of `array`. */
  def point(array: ArrayData): Unit = {
    elements = array
    count = array.numElements()
    var i = 0
    while (i < count) {
      if (row(i) == null) nullAt(i)
      i += 1
    }
  }

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
    throw new IllegalArgumentException(
      s"Column '${leaf.column}': element $i of its array of structs $what. " +
        "An array of structs is written as one feature per field holding every element's " +
        "value, which has no place for a null. Drop or fill the nulls first.")
  }

  override def numElements(): Int = count
  override def isNullAt(i: Int): Boolean = false
  override def getBoolean(i: Int): Boolean = row(i).getBoolean(ordinal)
  override def getByte(i: Int): Byte = row(i).getByte(ordinal)
  override def getShort(i: Int): Short = row(i).getShort(ordinal)
  override def getInt(i: Int): Int = row(i).getInt(ordinal)
  override def getLong(i: Int): Long = row(i).getLong(ordinal)
  override def getFloat(i: Int): Float = row(i).getFloat(ordinal)
  override def getDouble(i: Int): Double = row(i).getDouble(ordinal)
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal =
    row(i).getDecimal(ordinal, precision, scale)
  override def getUTF8String(i: Int): UTF8String = row(i).getUTF8String(ordinal)
  override def getBinary(i: Int): Array[Byte] = row(i).getBinary(ordinal)
  override def getArray(i: Int): ArrayData = row(i).getArray(ordinal)
}
