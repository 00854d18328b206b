package io.github.sparktfrecord.json

/**
 * Writes JSON text, value by value (`startObject`, `name`, `string`, ..., `endObject`), or a
 * whole [[Json]] tree ([[value]]), in one of three layouts:
 *
 *  - [[JsonWriter.Compact]]: `{"a":1,"b":[1,2]}`, for text machines pass around;
 *  - [[JsonWriter.Spaced]]: `{"a": 1, "b": [1, 2]}`, one line as Python's `json.dumps` writes it;
 *  - [[JsonWriter.Indented]]: two spaces a level, one field or element a line, as Python's
 *    `json.dumps(indent=2)` and TensorFlow Datasets write their files.
 *
 * Strings are escaped as JSON requires (`"`, `\`, control characters), and a lone surrogate as
 * `\\u` and its hex, so that any Java string round-trips; other characters are written as they
 * are (files are UTF-8). A value where a field name belongs, or the other way round, throws
 * `IllegalStateException`: the order is checked, not assumed. One writer writes one value;
 * [[reset]] empties it for the next.
 */
private[sparktfrecord] final class JsonWriter(layout: JsonWriter.Layout) {
  import JsonWriter._

  private val out = new java.lang.StringBuilder
  // Per open container, innermost last: whether it is an object, and how many values it holds.
  private var objects = new Array[Boolean](8)
  private var counts = new Array[Int](8)
  private var depth = 0
  private var named = false // a field name is written and its value is not yet
  private var done = false

  def startObject(): this.type = open(isObject = true, '{')

  def endObject(): this.type = close(isObject = true, '}')

  def startArray(): this.type = open(isObject = false, '[')

  def endArray(): this.type = close(isObject = false, ']')

  /** The name of the next field of the object being written. */
  def name(n: String): this.type = {
    if (depth == 0 || !objects(depth - 1) || named) {
      throw new IllegalStateException(s"a field name ($n) outside an object, or after one")
    }
    separate()
    quote(n, out)
    out.append(if (layout == Compact) ":" else ": ")
    named = true
    this
  }

  def string(s: String): this.type = {
    beforeValue()
    quote(s, out)
    this
  }

  def number(v: Long): this.type = {
    beforeValue()
    out.append(v)
    this
  }

  /** A number given as its JSON text (`1.5E-7`, `-0.0`): the caller's text, as it is. */
  def numberText(text: String): this.type = {
    beforeValue()
    out.append(text)
    this
  }

  def boolean(b: Boolean): this.type = {
    beforeValue()
    out.append(b)
    this
  }

  def nullValue(): this.type = {
    beforeValue()
    out.append("null")
    this
  }

  /** A whole tree. */
  def value(j: Json): this.type = {
    j match {
      case Json.Str(s) => string(s)
      case Json.Num(t) => numberText(t)
      case Json.Bool(b) => boolean(b)
      case Json.Null => nullValue()
      case Json.Arr(elements) =>
        startArray()
        elements.foreach(value)
        endArray()
      case Json.Obj(fields) =>
        startObject()
        fields.foreach { case (k, v) => name(k).value(v) }
        endObject()
    }
    this
  }

  /** The text of the value written, which must be whole. */
  def result: String = {
    if (!done) throw new IllegalStateException("the JSON value is not complete")
    out.toString
  }

  /** Empties the writer for another value. */
  def reset(): Unit = {
    out.setLength(0)
    depth = 0
    named = false
    done = false
  }

  private def open(isObject: Boolean, c: Char): this.type = {
    beforeValue()
    out.append(c)
    if (depth == objects.length) {
      objects = java.util.Arrays.copyOf(objects, depth * 2)
      counts = java.util.Arrays.copyOf(counts, depth * 2)
    }
    objects(depth) = isObject
    counts(depth) = 0
    depth += 1
    done = false
    this
  }

  private def close(isObject: Boolean, c: Char): this.type = {
    if (depth == 0 || objects(depth - 1) != isObject || named) {
      throw new IllegalStateException(s"'$c' closes no open ${if (isObject) "object" else "array"}")
    }
    depth -= 1
    if (layout == Indented && counts(depth) > 0) newLine()
    out.append(c)
    done = depth == 0
    this
  }

  /** Before a value: the separator and line break of an array's element, or none after a name. */
  private def beforeValue(): Unit = {
    if (named) named = false
    else if (depth > 0) {
      if (objects(depth - 1)) throw new IllegalStateException("a value where a name belongs")
      separate()
    } else if (done || out.length > 0) {
      throw new IllegalStateException("a second value after a whole one")
    }
    done = depth == 0
  }

  /** Before an array's element or an object's field. */
  private def separate(): Unit = {
    if (counts(depth - 1) > 0) out.append(if (layout == Spaced) ", " else ",")
    counts(depth - 1) += 1
    if (layout == Indented) newLine()
  }

  private def newLine(): Unit = {
    out.append('\n')
    var k = 0
    while (k < depth) {
      out.append("  ")
      k += 1
    }
  }
}

private[sparktfrecord] object JsonWriter {

  /** How the text is laid out; see the class's doc. */
  sealed abstract class Layout
  case object Compact extends Layout
  case object Spaced extends Layout
  case object Indented extends Layout

  /** `s` as a JSON string, quoted and escaped. */
  def quote(s: String): String = {
    val sb = new java.lang.StringBuilder(s.length + 2)
    quote(s, sb)
    sb.toString
  }

  private def quote(s: String, out: java.lang.StringBuilder): Unit = {
    out.append('"')
    var start = 0
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      val escape: String =
        if (c == '"') "\\\""
        else if (c == '\\') "\\\\"
        else if (c < 0x20) c match {
          case '\n' => "\\n"
          case '\r' => "\\r"
          case '\t' => "\\t"
          case '\b' => "\\b"
          case '\f' => "\\f"
          case _ => unicode(c)
        }
        else if (Character.isHighSurrogate(c)) {
          if (i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) {
            i += 1 // a pair, written as it is
            null
          } else unicode(c)
        } else if (Character.isLowSurrogate(c)) unicode(c) // its high one is not before it
        else null
      if (escape != null) {
        out.append(s, start, i).append(escape)
        start = i + 1
      }
      i += 1
    }
    out.append(s, start, s.length).append('"')
  }

  private def unicode(c: Char): String = f"\\u${c.toInt}%04x"
}
