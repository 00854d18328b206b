package io.github.sparktfrecord

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.types.StructType

import io.github.sparktfrecord.codec.{ExampleSerializer, RecordType}
import io.github.sparktfrecord.framing.TFRecordFraming
import io.github.sparktfrecord.wire.ProtoWire

/** `Example` records as the writer makes them, and their map entries, for the tests and benches. */
object ExampleRecords {

  /** Each row of `schema` as the `Example` bytes the serializer writes (no framing). */
  def serialized(schema: StructType, rows: Seq[InternalRow]): Array[Array[Byte]] = {
    val serializer = new ExampleSerializer(schema, RecordType.Example)
    val unsafe = UnsafeProjection.create(schema)
    rows.map { r =>
      val n = serializer.serialize(unsafe(r))
      serializer.buffer.slice(TFRecordFraming.HeaderBytes, TFRecordFraming.HeaderBytes + n)
    }.toArray
  }

  /** The map entries of a record [[serialized]] wrote (one `features` field), in order. */
  def entries(rec: Array[Byte]): Seq[Array[Byte]] = {
    val features = ProtoWire.delimited(rec, 1, rec.length)
    var p = (features >>> 32).toInt
    val out = Seq.newBuilder[Array[Byte]]
    while (p < rec.length) {
      val e = ProtoWire.delimited(rec, p + 1, rec.length).toInt
      out += rec.slice(p, e)
      p = e
    }
    out.result()
  }
}
