package io.github.sparktfrecord.json

/**
 * Reads JSON text (RFC 8259) into a [[Json]] tree: strict, as Python's `json` and TensorFlow
 * Datasets write it. Text that is not JSON throws a [[JsonException]] saying where (line and
 * column) and what was found; so do nesting deeper than [[MaxDepth]] (a bound, so that no input
 * overflows the stack) and anything after the value but white space.
 */
private[sparktfrecord] object JsonParser {

  /** The deepest nesting of arrays and objects read. */
  final val MaxDepth = 512

  def parse(text: String): Json = {
    val p = new Parser(text)
    p.skipSpace()
    val v = p.value(0)
    p.skipSpace()
    if (!p.atEnd) p.fail("text after the JSON value")
    v
  }

  private final class Parser(s: String) {
    private var i = 0

    def atEnd: Boolean = i >= s.length

    def skipSpace(): Unit =
      while (i < s.length &&
          (s.charAt(i) match {
            case ' ' | '\n' | '\r' | '\t' => true
            case _ => false
          })) i += 1

    def value(depth: Int): Json = {
      if (atEnd) fail("the text ends where a value belongs")
      s.charAt(i) match {
        case '{' => obj(depth + 1)
        case '[' => arr(depth + 1)
        case '"' => Json.Str(string())
        case 't' => literal("true", Json.Bool(true))
        case 'f' => literal("false", Json.Bool(false))
        case 'n' => literal("null", Json.Null)
        case c if c == '-' || (c >= '0' && c <= '9') => number()
        case c => fail(s"${found(c)} where a value belongs")
      }
    }

    private def obj(depth: Int): Json = {
      if (depth > MaxDepth) fail(s"nesting deeper than $MaxDepth")
      i += 1
      val fields = Vector.newBuilder[(String, Json)]
      skipSpace()
      if (!atEnd && s.charAt(i) == '}') {
        i += 1
        return Json.Obj(fields.result())
      }
      while (true) {
        skipSpace()
        if (atEnd || s.charAt(i) != '"') fail(s"${foundHere()} where a field name belongs")
        val key = string()
        skipSpace()
        expect(':')
        skipSpace()
        fields += key -> value(depth)
        skipSpace()
        if (atEnd) fail("the text ends inside an object")
        s.charAt(i) match {
          case ',' => i += 1
          case '}' =>
            i += 1
            return Json.Obj(fields.result())
          case c => fail(s"${found(c)} where ',' or '}' belongs")
        }
      }
      throw new IllegalStateException("unreachable")
    }

    private def arr(depth: Int): Json = {
      if (depth > MaxDepth) fail(s"nesting deeper than $MaxDepth")
      i += 1
      val elements = Vector.newBuilder[Json]
      skipSpace()
      if (!atEnd && s.charAt(i) == ']') {
        i += 1
        return Json.Arr(elements.result())
      }
      while (true) {
        skipSpace()
        elements += value(depth)
        skipSpace()
        if (atEnd) fail("the text ends inside an array")
        s.charAt(i) match {
          case ',' => i += 1
          case ']' =>
            i += 1
            return Json.Arr(elements.result())
          case c => fail(s"${found(c)} where ',' or ']' belongs")
        }
      }
      throw new IllegalStateException("unreachable")
    }

    /** A string, from its opening quote (at `i`) to past its closing one. */
    private def string(): String = {
      i += 1
      val sb = new java.lang.StringBuilder
      while (true) {
        val start = i
        while (i < s.length && { val c = s.charAt(i); c != '"' && c != '\\' && c >= 0x20 }) i += 1
        sb.append(s, start, i)
        if (atEnd) fail("the text ends inside a string")
        s.charAt(i) match {
          case '"' =>
            i += 1
            return sb.toString
          case '\\' =>
            i += 1
            if (atEnd) fail("the text ends inside a string")
            val c = s.charAt(i)
            i += 1
            c match {
              case '"' | '\\' | '/' => sb.append(c)
              case 'b' => sb.append('\b')
              case 'f' => sb.append('\f')
              case 'n' => sb.append('\n')
              case 'r' => sb.append('\r')
              case 't' => sb.append('\t')
              case 'u' => sb.append(hex4())
              case other =>
                i -= 1
                fail(s"the escape \\$other, which JSON does not have")
            }
          case c => fail(f"the control character U+${c.toInt}%04X unescaped in a string")
        }
      }
      throw new IllegalStateException("unreachable")
    }

    /** The four hex digits of a `\\u` escape, as the UTF-16 unit they are (surrogates too). */
    private def hex4(): Char = {
      var v = 0
      var k = 0
      while (k < 4) {
        if (atEnd) fail("the text ends inside a \\u escape")
        val c = s.charAt(i)
        // ASCII only: Character.digit would take other scripts' digits too.
        val d =
          if (c >= '0' && c <= '9') c - '0'
          else if (c >= 'a' && c <= 'f') c - 'a' + 10
          else if (c >= 'A' && c <= 'F') c - 'A' + 10
          else -1
        if (d < 0) fail(s"${foundHere()} in a \\u escape, where a hex digit belongs")
        v = v * 16 + d
        i += 1
        k += 1
      }
      v.toChar
    }

    /** A number, by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
    private def number(): Json = {
      val start = i
      if (s.charAt(i) == '-') i += 1
      if (!atEnd && s.charAt(i) == '0') i += 1
      else digits("an integer part")
      if (!atEnd && s.charAt(i) == '.') {
        i += 1
        digits("a fraction")
      }
      if (!atEnd && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
        i += 1
        if (!atEnd && (s.charAt(i) == '+' || s.charAt(i) == '-')) i += 1
        digits("an exponent")
      }
      Json.Num(s.substring(start, i))
    }

    private def digits(what: String): Unit = {
      val start = i
      while (i < s.length && s.charAt(i) >= '0' && s.charAt(i) <= '9') i += 1
      if (i == start) fail(s"${foundHere()} in a number, where the digits of $what belong")
    }

    private def literal(word: String, v: Json): Json = {
      if (!s.startsWith(word, i)) fail(s"${foundHere()} where a value belongs")
      i += word.length
      v
    }

    private def expect(c: Char): Unit = {
      if (atEnd || s.charAt(i) != c) fail(s"${foundHere()} where '$c' belongs")
      i += 1
    }

    private def foundHere(): String = if (atEnd) "the end of the text" else found(s.charAt(i))

    private def found(c: Char): String =
      if (c < 0x20 || c > 0x7e) f"U+${c.toInt}%04X" else s"'$c'"

    def fail(why: String): Nothing = {
      var line = 1
      var column = 1
      var k = 0
      while (k < i && k < s.length) {
        if (s.charAt(k) == '\n') {
          line += 1
          column = 1
        } else column += 1
        k += 1
      }
      throw new JsonException(s"Invalid JSON at line $line, column $column: $why")
    }
  }
}
