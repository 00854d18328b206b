package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeArrayData, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import io.github.sparktfrecord.codec.UnsafeSlot

/** [[UnsafeSlot]] finds the bytes Spark's own getters read, in a row and in an array. */
class UnsafeSlotSuite extends UnitSuite {
  private val schema = StructType(Seq(
    StructField("n", LongType), StructField("s", StringType), StructField("b", BinaryType),
    StructField("t", StructType(Seq(StructField("x", IntegerType)))),
    StructField("ss", ArrayType(StringType))))

  private val row: UnsafeRow = UnsafeProjection.create(schema).apply(InternalRow(
    7L, UTF8String.fromString("h\u00e9llo"), Array[Byte](1, 2, 3), InternalRow(42),
    new GenericArrayData(Array[Any](UTF8String.fromString(""), UTF8String.fromString("abc"))))
  ).copy()

  /** The bytes that slot `ordinal` of an unsafe container points at. */
  private def bytes(base: AnyRef, baseOffset: Long, slot: Long): Seq[Byte] = {
    val out = new Array[Byte](UnsafeSlot.size(slot))
    Platform.copyMemory(base, UnsafeSlot.offset(baseOffset, slot), out,
      Platform.BYTE_ARRAY_OFFSET, out.length)
    out.toSeq
  }

  private def inRow(ordinal: Int): Seq[Byte] =
    bytes(row.getBaseObject, row.getBaseOffset, row.getLong(ordinal))

  test("a row's string, binary, struct and array slots: Spark's own bytes for them") {
    assertEquals(inRow(1), row.getUTF8String(1).getBytes.toSeq)
    assertEquals(inRow(2), row.getBinary(2).toSeq)
    val struct = row.getStruct(3, 1)
    assertEquals(inRow(3), struct.getBytes.toSeq)
    assertEquals(struct.getInt(0), 42)
    val slot = row.getLong(4)
    val array = new UnsafeArrayData
    array.pointTo(row.getBaseObject, UnsafeSlot.offset(row.getBaseOffset, slot),
      UnsafeSlot.size(slot))
    assertEquals(array.getSizeInBytes, row.getArray(4).asInstanceOf[UnsafeArrayData].getSizeInBytes)
    assertEquals((0 until array.numElements()).map(array.getUTF8String(_).toString), Seq("", "abc"))
  }

  test("an array's slots, and an empty value") {
    val a = row.getArray(4).asInstanceOf[UnsafeArrayData]
    val empty = a.getLong(0)
    assertEquals(UnsafeSlot.size(empty), 0)
    assertEquals(bytes(a.getBaseObject, a.getBaseOffset, empty), Seq.empty[Byte])
    assertEquals(bytes(a.getBaseObject, a.getBaseOffset, a.getLong(1)),
      "abc".getBytes("UTF-8").toSeq)
    // The offset is the high half, unsigned; the size the low half.
    val slot = (0x80000000L << 32) | 0x7fffffffL
    assertEquals(UnsafeSlot.offset(16L, slot), 16L + 0x80000000L)
    assertEquals(UnsafeSlot.size(slot), Int.MaxValue)
  }
}
