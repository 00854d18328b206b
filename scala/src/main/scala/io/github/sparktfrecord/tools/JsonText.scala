package io.github.sparktfrecord.tools

import java.io.StringWriter

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator, PrettyPrinter}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.TypeTable

/**
 * Rows of one schema as JSON text for people to read (not for machines: bytes become text or
 * hex), one object per row, `{"id": 1, "x": [0.5, 1.0]}`. Jackson writes the JSON; each value's
 * rendering is its [[TypeEntry.json]], chosen once for the schema.
 */
private[sparktfrecord] final class JsonText(schema: StructType) {
  import JsonText._

  private val fields: Array[Value] = schema.fields.map(f => value(f.dataType))
  private val names: Array[String] = schema.fieldNames

  def row(r: InternalRow): String = {
    val out = new StringWriter
    val gen = Factory.createGenerator(out)
    gen.setPrettyPrinter(Spaced)
    writeStruct(gen, r, names, fields)
    gen.close()
    out.toString
  }
}

private[sparktfrecord] object JsonText {
  private val Factory = new JsonFactory()

  /** Writes value `i` of a row or array, not null. */
  private abstract class Value {
    def write(gen: JsonGenerator, from: SpecializedGetters, i: Int): Unit
  }

  private def writeStruct(
      gen: JsonGenerator,
      r: SpecializedGetters,
      names: Array[String],
      fields: Array[Value]): Unit = {
    gen.writeStartObject()
    var i = 0
    while (i < fields.length) {
      gen.writeFieldName(names(i))
      writeOrNull(gen, r, i, fields(i))
      i += 1
    }
    gen.writeEndObject()
  }

  private def writeOrNull(gen: JsonGenerator, from: SpecializedGetters, i: Int, v: Value): Unit =
    if (from.isNullAt(i)) gen.writeNull() else v.write(gen, from, i)

  private def value(t: DataType): Value = t match {
    case ArrayType(e, _) =>
      val element = value(e)
      new Value {
        def write(gen: JsonGenerator, from: SpecializedGetters, i: Int): Unit = {
          val a = from.getArray(i)
          gen.writeStartArray()
          var j = 0
          while (j < a.numElements()) {
            writeOrNull(gen, a, j, element)
            j += 1
          }
          gen.writeEndArray()
        }
      }
    case u: UserDefinedType[_] => value(u.sqlType)
    case s: StructType =>
      val fields = s.fields.map(f => value(f.dataType))
      new Value {
        def write(gen: JsonGenerator, from: SpecializedGetters, i: Int): Unit =
          writeStruct(gen, from.getStruct(i, fields.length), s.fieldNames, fields)
      }
    case other => TypeTable.entry(other) match {
        case Some(entry) => new Value {
            def write(gen: JsonGenerator, from: SpecializedGetters, i: Int): Unit =
              entry.json(gen, from, i)
          }
        case None => new Value {
            def write(gen: JsonGenerator, from: SpecializedGetters, i: Int): Unit =
              gen.writeString(other.simpleString)
          }
      }
  }

  /** JSON on one line with a space after each `,` and `:`, as Python's `json.dumps` writes it. */
  private object Spaced extends PrettyPrinter {
    def writeRootValueSeparator(g: JsonGenerator): Unit = g.writeRaw(' ')
    def writeStartObject(g: JsonGenerator): Unit = g.writeRaw('{')
    def writeEndObject(g: JsonGenerator, entries: Int): Unit = g.writeRaw('}')
    def writeObjectEntrySeparator(g: JsonGenerator): Unit = g.writeRaw(", ")
    def writeObjectFieldValueSeparator(g: JsonGenerator): Unit = g.writeRaw(": ")
    def writeStartArray(g: JsonGenerator): Unit = g.writeRaw('[')
    def writeEndArray(g: JsonGenerator, values: Int): Unit = g.writeRaw(']')
    def writeArrayValueSeparator(g: JsonGenerator): Unit = g.writeRaw(", ")
    def beforeArrayValues(g: JsonGenerator): Unit = ()
    def beforeObjectEntries(g: JsonGenerator): Unit = ()
  }
}
