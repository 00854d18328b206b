package io.github.sparktfrecord

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._

/** Rows as JSON text for people to read (not for machines: bytes become text or hex). */
private[sparktfrecord] object JsonText {
  def row(r: InternalRow, schema: StructType): String = {
    val sb = new StringBuilder("{")
    schema.fields.zipWithIndex.foreach { case (f, i) =>
      if (i > 0) sb.append(", ")
      quote(sb, f.name)
      sb.append(": ")
      value(sb, r, i, f.dataType)
    }
    sb.append("}").toString
  }

  private def value(sb: StringBuilder, r: SpecializedGetters, i: Int, t: DataType): Unit =
    if (r.isNullAt(i)) sb.append("null")
    else t match {
      case BooleanType => sb.append(r.getBoolean(i))
      case ByteType => sb.append(r.getByte(i))
      case ShortType => sb.append(r.getShort(i))
      case IntegerType => sb.append(r.getInt(i))
      case DateType => quote(sb, java.time.LocalDate.ofEpochDay(r.getInt(i).toLong).toString)
      case LongType => sb.append(r.getLong(i))
      case TimestampType | TimestampNTZType =>
        val micros = r.getLong(i)
        quote(sb, java.time.Instant.EPOCH.plusNanos(Math.multiplyExact(micros, 1000L)).toString)
      case FloatType => number(sb, r.getFloat(i).toDouble, java.lang.Float.toString(r.getFloat(i)))
      case DoubleType => number(sb, r.getDouble(i), java.lang.Double.toString(r.getDouble(i)))
      case d: DecimalType =>
        sb.append(r.getDecimal(i, d.precision, d.scale).toJavaBigDecimal.toPlainString)
      case StringType => bytes(sb, r.getUTF8String(i).getBytes)
      case BinaryType => bytes(sb, r.getBinary(i))
      case ArrayType(e, _) =>
        val a = r.getArray(i)
        sb.append('[')
        var j = 0
        while (j < a.numElements()) {
          if (j > 0) sb.append(", ")
          value(sb, a, j, e)
          j += 1
        }
        sb.append(']')
      case u: UserDefinedType[_] => value(sb, r, i, u.sqlType)
      case s: StructType =>
        val struct = r.getStruct(i, s.length)
        sb.append(row(struct, s))
      case other => quote(sb, other.simpleString)
    }

  private def number(sb: StringBuilder, d: Double, text: String): Unit =
    if (d.isNaN || d.isInfinite) quote(sb, text) else sb.append(text)

  private def bytes(sb: StringBuilder, b: Array[Byte]): Unit =
    if (Utf8.isValid(b, 0, b.length)) quote(sb, new String(b, StandardCharsets.UTF_8))
    else {
      sb.append("\"0x")
      b.foreach(x => sb.append(f"${x & 0xff}%02x"))
      sb.append('"')
    }

  private def quote(sb: StringBuilder, s: String): Unit = {
    sb.append('"')
    s.foreach {
      case '"' => sb.append("\\\"")
      case '\\' => sb.append("\\\\")
      case '\n' => sb.append("\\n")
      case '\r' => sb.append("\\r")
      case '\t' => sb.append("\\t")
      case c if c < ' ' => sb.append(f"\\u${c.toInt}%04x")
      case c => sb.append(c)
    }
    sb.append('"')
  }
}
