package io.github.sparktfrecord.tools

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.TypeTable
import io.github.sparktfrecord.json.JsonWriter

/**
 * Rows of one schema as JSON text for people to read (not for machines: bytes become text or
 * hex), one object per row on one line, `{"id": 1, "x": [0.5, 1.0]}` as Python's `json.dumps`
 * writes it ([[JsonWriter.Spaced]]); each value's rendering is its [[TypeEntry.json]], chosen
 * once for the schema.
 */
private[sparktfrecord] final class JsonText(schema: StructType) {
  import JsonText._

  private val fields: Array[Value] = schema.fields.map(f => value(f.dataType))
  private val names: Array[String] = schema.fieldNames
  private val out = new JsonWriter(JsonWriter.Spaced)

  def row(r: InternalRow): String = {
    out.reset()
    writeStruct(out, r, names, fields)
    out.result
  }
}

private[sparktfrecord] object JsonText {

  /** Writes value `i` of a row or array, not null. */
  private abstract class Value {
    def write(out: JsonWriter, from: SpecializedGetters, i: Int): Unit
  }

  private def writeStruct(
      out: JsonWriter,
      r: SpecializedGetters,
      names: Array[String],
      fields: Array[Value]): Unit = {
    out.startObject()
    var i = 0
    while (i < fields.length) {
      out.name(names(i))
      writeOrNull(out, r, i, fields(i))
      i += 1
    }
    out.endObject()
  }

  private def writeOrNull(out: JsonWriter, from: SpecializedGetters, i: Int, v: Value): Unit =
    if (from.isNullAt(i)) out.nullValue() else v.write(out, from, i)

  private def value(t: DataType): Value = t match {
    case ArrayType(e, _) =>
      val element = value(e)
      new Value {
        def write(out: JsonWriter, from: SpecializedGetters, i: Int): Unit = {
          val a = from.getArray(i)
          out.startArray()
          var j = 0
          while (j < a.numElements()) {
            writeOrNull(out, a, j, element)
            j += 1
          }
          out.endArray()
        }
      }
    case u: UserDefinedType[_] => value(u.sqlType)
    case s: StructType =>
      val fields = s.fields.map(f => value(f.dataType))
      new Value {
        def write(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
          writeStruct(out, from.getStruct(i, fields.length), s.fieldNames, fields)
      }
    case other => TypeTable.entry(other) match {
        case Some(entry) => new Value {
            def write(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
              entry.json(out, from, i)
          }
        case None => new Value {
            def write(out: JsonWriter, from: SpecializedGetters, i: Int): Unit =
              out.string(other.simpleString)
          }
      }
  }
}
