package io.github.sparktfrecord.tools

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

import io.github.sparktfrecord.codec.TypeTable

/**
 * Rows of one schema as exact text, for machines to compare (the differential tests hold the
 * Python codec's values to it): nothing is lost or rounded, and two values have the same text
 * only when they are the same value of the column's type. One row is `{name=value,...}`:
 *  - null: `null` (an empty list is `[]`);
 *  - boolean: `true` / `false`; byte, short, int, long: the decimal integer; date: its days,
 *    timestamp and timestamp_ntz: their microseconds since 1970-01-01, as decimal integers;
 *  - float: `f:` and the 8 hex digits of its bits; double: `d:` and 16 (NaN payloads, -0.0 kept);
 *  - decimal: `dec:` and its plain text at the column's scale (`dec:1.250`);
 *  - string: `s:` and the hex of its UTF-8 bytes; binary: `b:` and the hex of its bytes;
 *  - array: `[v,v]`; struct: `{name=v,name=v}`;
 *  - ML vector: `vec(size){i=d:bits,...}`, its entries whose bits are not those of +0.0, by
 *    position, the same text for a dense and a sparse vector of the same values (Spark ML's
 *    vectors are equal so too).
 *
 * The renderer of each field is chosen once, from the schema, as [[JsonText]]'s are.
 */
private[sparktfrecord] final class ExactText(schema: StructType) {
  import ExactText._

  private val fields: Array[Value] = schema.fields.map(f => value(f.dataType))
  private val names: Array[String] = schema.fieldNames

  /** The text of a row of the schema. */
  def row(r: InternalRow): String = {
    val out = new java.lang.StringBuilder
    writeStruct(out, r, names, fields)
    out.toString
  }
}

private[sparktfrecord] object ExactText {

  /** Appends value `i` of a row or array, not null. */
  private abstract class Value {
    def write(out: java.lang.StringBuilder, from: SpecializedGetters, i: Int): Unit
  }

  private val Digits = "0123456789abcdef".toCharArray

  private def writeStruct(
      out: java.lang.StringBuilder,
      r: SpecializedGetters,
      names: Array[String],
      fields: Array[Value]): Unit = {
    out.append('{')
    var i = 0
    while (i < fields.length) {
      if (i > 0) out.append(',')
      out.append(names(i)).append('=')
      writeOrNull(out, r, i, fields(i))
      i += 1
    }
    out.append('}')
  }

  private def writeOrNull(
      out: java.lang.StringBuilder,
      from: SpecializedGetters,
      i: Int,
      v: Value): Unit =
    if (from.isNullAt(i)) out.append("null") else v.write(out, from, i)

  private def hex(out: java.lang.StringBuilder, bytes: Array[Byte]): Unit =
    bytes.foreach { b => out.append(Digits((b >> 4) & 0xf)).append(Digits(b & 0xf)) }

  private def hex(out: java.lang.StringBuilder, bits: Long, digits: Int): Unit = {
    var shift = 4 * (digits - 1)
    while (shift >= 0) {
      out.append(Digits(((bits >>> shift) & 0xf).toInt))
      shift -= 4
    }
  }

  private def double(out: java.lang.StringBuilder, d: Double): Unit = {
    out.append("d:")
    hex(out, java.lang.Double.doubleToRawLongBits(d), 16)
  }

  private def of(f: (java.lang.StringBuilder, SpecializedGetters, Int) => Unit): Value =
    new Value {
      def write(out: java.lang.StringBuilder, from: SpecializedGetters, i: Int): Unit =
        f(out, from, i)
    }

  private def value(t: DataType): Value = t match {
    case BooleanType => of((out, g, i) => out.append(g.getBoolean(i)))
    case ByteType => of((out, g, i) => out.append(g.getByte(i).toInt))
    case ShortType => of((out, g, i) => out.append(g.getShort(i).toInt))
    case IntegerType | DateType => of((out, g, i) => out.append(g.getInt(i)))
    case LongType | TimestampType | TimestampNTZType => of((out, g, i) => out.append(g.getLong(i)))
    case t if TypeTable.isTime(t) => of((out, g, i) => out.append(g.getLong(i)))
    case FloatType => of { (out, g, i) =>
        out.append("f:")
        hex(out, java.lang.Float.floatToRawIntBits(g.getFloat(i)) & 0xffffffffL, 8)
      }
    case DoubleType => of((out, g, i) => double(out, g.getDouble(i)))
    case d: DecimalType => of { (out, g, i) =>
        out.append("dec:").append(g.getDecimal(i, d.precision, d.scale).toJavaBigDecimal
          .toPlainString)
      }
    case _: StringType => of { (out, g, i) =>
        out.append("s:")
        hex(out, g.getUTF8String(i).getBytes)
      }
    case BinaryType => of { (out, g, i) =>
        out.append("b:")
        hex(out, g.getBinary(i))
      }
    case ArrayType(e, _) =>
      val element = value(e)
      of { (out, g, i) =>
        val a = g.getArray(i)
        out.append('[')
        var j = 0
        while (j < a.numElements()) {
          if (j > 0) out.append(',')
          writeOrNull(out, a, j, element)
          j += 1
        }
        out.append(']')
      }
    case s: StructType =>
      val fields = s.fields.map(f => value(f.dataType))
      of((out, g, i) => writeStruct(out, g.getStruct(i, fields.length), s.fieldNames, fields))
    case u: UserDefinedType[_] if TypeTable.isVector(u) => of(vector)
    case u: UserDefinedType[_] => value(u.sqlType)
    case other =>
      throw new IllegalArgumentException(s"No exact text for a column of ${other.simpleString}")
  }

  /**
   * An ML vector, stored as Spark ML's `VectorUDT` stores it: `struct<type: tinyint (0 sparse,
   * 1 dense), size: int, indices: array<int>, values: array<double>>`.
   */
  private def vector(out: java.lang.StringBuilder, g: SpecializedGetters, i: Int): Unit = {
    val v = g.getStruct(i, 4)
    val values = v.getArray(3)
    val dense = v.getByte(0) == 1
    val indices = if (dense) null else v.getArray(2)
    out.append("vec(").append(if (dense) values.numElements() else v.getInt(1)).append("){")
    var first = true
    var j = 0
    while (j < values.numElements()) {
      val d = values.getDouble(j)
      if (java.lang.Double.doubleToRawLongBits(d) != 0L) {
        if (!first) out.append(',')
        first = false
        out.append(if (dense) j else indices.getInt(j)).append('=')
        double(out, d)
      }
      j += 1
    }
    out.append('}')
  }
}
