package org.apache.spark.ml.linalg

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

/**
 * A stand-in for spark-mllib's `VectorUDT` (which the unit tests do not depend on), under its
 * class name, which is how the codec recognises a vector column: the same storage struct
 * (type: 0 sparse, 1 dense; size; indices; values). Its user objects are the storage rows.
 */
class VectorUDT extends UserDefinedType[InternalRow] {
  override def sqlType: StructType = StructType(Seq(
    StructField("type", ByteType, nullable = false),
    StructField("size", IntegerType, nullable = true),
    StructField("indices", ArrayType(IntegerType, containsNull = false), nullable = true),
    StructField("values", ArrayType(DoubleType, containsNull = false), nullable = true)))
  override def serialize(obj: InternalRow): Any = obj
  override def deserialize(datum: Any): InternalRow = datum.asInstanceOf[InternalRow].copy()
  override def userClass: Class[InternalRow] = classOf[InternalRow]
  override def typeName: String = "vector"
  override def equals(o: Any): Boolean = o.isInstanceOf[VectorUDT]
  override def hashCode(): Int = classOf[VectorUDT].getName.hashCode
}
