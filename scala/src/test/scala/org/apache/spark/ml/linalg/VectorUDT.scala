package org.apache.spark.ml.linalg

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

/**
 * A stand-in for spark-mllib's `VectorUDT` (which the unit tests do not depend on), under its
 * class name, which is how the codec recognises a vector column: the same storage struct
 * (type: 0 sparse, 1 dense; size; indices; values). Its user objects hold the storage rows, in a
 * class annotated with the UDT, as Spark 3.5's row encoder requires of a UDT's user class.
 */
class VectorUDT extends UserDefinedType[StandInVector] {
  override def sqlType: StructType = StructType(Seq(
    StructField("type", ByteType, nullable = false),
    StructField("size", IntegerType, nullable = true),
    StructField("indices", ArrayType(IntegerType, containsNull = false), nullable = true),
    StructField("values", ArrayType(DoubleType, containsNull = false), nullable = true)))
  override def serialize(obj: StandInVector): Any = obj.storage
  override def deserialize(datum: Any): StandInVector =
    new StandInVector(datum.asInstanceOf[InternalRow].copy())
  override def userClass: Class[StandInVector] = classOf[StandInVector]
  override def typeName: String = "vector"
  override def equals(o: Any): Boolean = o.isInstanceOf[VectorUDT]
  override def hashCode(): Int = classOf[VectorUDT].getName.hashCode
}

/** The stand-in's user object: a vector's storage row. */
@SQLUserDefinedType(udt = classOf[VectorUDT])
final class StandInVector(val storage: InternalRow)
