package io.github.sparktfrecord

import scala.util.Random

import org.apache.spark.sql.types._

import io.github.sparktfrecord.json.{Json, JsonException, JsonParser, JsonWriter}

/**
 * Our JSON reader and writer (the `json` package), which the manifest, the count files and the
 * TFDS metadata are read and written with instead of Jackson: escapes, Unicode, numbers (int64
 * extremes, doubles by their text), nesting, the three layouts, and malformed text, each refused
 * with its line and column.
 */
class JsonSuite extends UnitSuite {

  private def parse(s: String): Json = JsonParser.parse(s)

  private def error(s: String): String = intercept[JsonException](parse(s)).getMessage

  private val tree = Json.obj(
    "s" -> Json.str("a\"b\\c\nd"),
    "n" -> Json.num(Long.MinValue),
    "d" -> Json.Num("-1.5E-7"),
    "t" -> Json.Bool(true),
    "f" -> Json.Bool(false),
    "z" -> Json.Null,
    "a" -> Json.arr(Seq(Json.num(1), Json.arr(Nil), Json.obj())),
    "o" -> Json.obj("k" -> Json.arr(Seq(Json.str("é"), Json.Null))))

  test("the three layouts, as Python's json.dumps writes them") {
    assertEquals(tree.compact,
      """{"s":"a\"b\\c\nd","n":-9223372036854775808,"d":-1.5E-7,"t":true,"f":false,""" +
        """"z":null,"a":[1,[],{}],"o":{"k":["é",null]}}""")
    assertEquals(new JsonWriter(JsonWriter.Spaced).value(tree).result,
      """{"s": "a\"b\\c\nd", "n": -9223372036854775808, "d": -1.5E-7, "t": true, "f": false, """ +
        """"z": null, "a": [1, [], {}], "o": {"k": ["é", null]}}""")
    // json.dumps(value, indent=2, ensure_ascii=False) + "\n", byte for byte.
    assertEquals(tree.indented,
      """{
        |  "s": "a\"b\\c\nd",
        |  "n": -9223372036854775808,
        |  "d": -1.5E-7,
        |  "t": true,
        |  "f": false,
        |  "z": null,
        |  "a": [
        |    1,
        |    [],
        |    {}
        |  ],
        |  "o": {
        |    "k": [
        |      "é",
        |      null
        |    ]
        |  }
        |}
        |""".stripMargin)
  }

  test("every layout reads back as the same tree") {
    for (layout <- Seq(JsonWriter.Compact, JsonWriter.Spaced, JsonWriter.Indented)) {
      assertEquals(parse(new JsonWriter(layout).value(tree).result), tree: Json, layout)
    }
  }

  test("strings: JSON's escapes, other control characters as \\u, the rest as it is") {
    assertEquals(JsonWriter.quote("\"\\/\b\f\n\r\t"), "\"\\\"\\\\/\\b\\f\\n\\r\\t\"")
    assertEquals(JsonWriter.quote("\u0000\u001f\u007f"), "\"\\u0000\\u001f\u007f\"")
    assertEquals(JsonWriter.quote("é日本😀"), "\"é日本😀\"")
    // A lone surrogate is no character: escaped, so that the text is valid UTF-8 and reads back.
    assertEquals(JsonWriter.quote("a\ud83db"), "\"a\\ud83db\"")
    assertEquals(JsonWriter.quote("\ude00\ud83d"), "\"\\ude00\\ud83d\"")
    assertEquals(parse(JsonWriter.quote("\ude00\ud83d")), Json.str("\ude00\ud83d"): Json)
    assertEquals(parse("""" \" \\ \/ \b \f \n \r \t """"),
      Json.str(" \" \\ / \b \f \n \r \t "): Json)
  }

  test("strings: \\u escapes, surrogate pairs among them, and raw UTF-16") {
    assertEquals(parse("\"\\u00e9\\u65E5\\ud83d\\ude00\"").text, "é日😀")
    assertEquals(parse("\"é日😀\"").text, "é日😀")
    assertEquals(parse("\"\\u0000\"").text, "\u0000")
  }

  test("any string round-trips: random UTF-16 units, surrogates and controls included") {
    val random = new Random(41)
    for (_ <- 0 until 5000) {
      val s = new String(Array.fill(random.nextInt(12)) {
        random.nextInt(4) match {
          case 0 => random.nextInt(0x80).toChar
          case 1 => (0xd800 + random.nextInt(0x800)).toChar
          case _ => random.nextInt(0x10000).toChar
        }
      })
      assertEquals(parse(JsonWriter.quote(s)).text, s)
      assertEquals(parse(Json.arr(Seq(Json.str(s))).indented), Json.arr(Seq(Json.str(s))): Json)
    }
  }

  test("int64 numbers: the extremes exact, one past them refused") {
    assertEquals(parse("9223372036854775807").long, Long.MaxValue)
    assertEquals(parse("-9223372036854775808").long, Long.MinValue)
    assertEquals(parse("[-0]").elements.head.long, 0L)
    // protobuf's JSON, and so TFDS's dataset_info.json, writes int64 as strings.
    assertEquals(parse("\"-9223372036854775808\"").long, Long.MinValue)
    assertEquals(parse("1.0e3").long, 1000L)
    for (t <- Seq("9223372036854775808", "-9223372036854775809", "1.5", "\"x\"", "true", "[]")) {
      assert(intercept[JsonException](parse(t).long).getMessage.startsWith("expected an"), t)
    }
    assertEquals(parse("2147483647").int, Int.MaxValue)
    assertEquals(intercept[JsonException](parse("2147483648").int).getMessage,
      "expected an int32, found 2147483648")
  }

  test("doubles: the text kept as written, the value bit-exact") {
    for (d <- Seq(0.0, -0.0, 1.5, -2.5e-7, Double.MaxValue, Double.MinPositiveValue, 1.0 / 3,
        java.lang.Float.MIN_VALUE.toDouble)) {
      val text = java.lang.Double.toString(d)
      val back = parse(s"[$text]").elements.head
      assertEquals(back, Json.Num(text): Json)
      assertEquals(java.lang.Double.doubleToRawLongBits(back.double),
        java.lang.Double.doubleToRawLongBits(d), text)
      assertEquals(back.compact, text)
    }
    assertEquals(parse("1E+2").double, 100.0)
    assertEquals(parse("\"NaN\"").double.isNaN, true)
  }

  test("nesting: deep within the bound, the bound refused") {
    val deep = JsonParser.MaxDepth
    val ok = parse("[" * deep + "]" * deep)
    assertEquals(ok.compact, "[" * deep + "]" * deep)
    assertEquals(error("[" * (deep + 1) + "]" * (deep + 1)),
      s"Invalid JSON at line 1, column ${deep + 1}: nesting deeper than $deep")
    assertEquals(error("{\"a\":" * (deep + 1)),
      s"Invalid JSON at line 1, column ${5 * deep + 1}: nesting deeper than $deep")
  }

  test("objects keep their order; a name given twice reads as its last value") {
    val o = parse("""{"b": 1, "a": 2, "b": 3}""")
    assertEquals(o.fields.map(_._1), Seq("b", "a", "b"))
    assertEquals(o("b").long, 3L)
    assertEquals(o.asInstanceOf[Json.Obj].updated("a", Json.Null).compact,
      """{"b":1,"a":null,"b":3}""")
    assertEquals(Json.obj().updated("x", Json.num(1)).compact, """{"x":1}""")
  }

  test("malformed text is refused with where and what") {
    val cases = Seq[(String, String)](
      "" -> "line 1, column 1: the text ends where a value belongs",
      "  \n " -> "line 2, column 2: the text ends where a value belongs",
      "{" -> "line 1, column 2: the end of the text where a field name belongs",
      "[1,]" -> "line 1, column 4: ']' where a value belongs",
      "[1 2]" -> "line 1, column 4: '2' where ',' or ']' belongs",
      "{\"a\" 1}" -> "line 1, column 6: '1' where ':' belongs",
      "{\"a\":1,}" -> "line 1, column 8: '}' where a field name belongs",
      "{1:2}" -> "line 1, column 2: '1' where a field name belongs",
      "{\"a\":1" -> "line 1, column 7: the text ends inside an object",
      "[1" -> "line 1, column 3: the text ends inside an array",
      "01" -> "line 1, column 2: text after the JSON value",
      "1 2" -> "line 1, column 3: text after the JSON value",
      "1." ->
        ("line 1, column 3: the end of the text in a number, where the digits of a " +
          "fraction belong"),
      "-" ->
        ("line 1, column 2: the end of the text in a number, where the digits of an " +
          "integer part belong"),
      "1e+" ->
        ("line 1, column 4: the end of the text in a number, where the digits of an " +
          "exponent belong"),
      "+1" -> "line 1, column 1: '+' where a value belongs",
      ".5" -> "line 1, column 1: '.' where a value belongs",
      "NaN" -> "line 1, column 1: 'N' where a value belongs",
      "tru" -> "line 1, column 1: 't' where a value belongs",
      "nul" -> "line 1, column 1: 'n' where a value belongs",
      "\"abc" -> "line 1, column 5: the text ends inside a string",
      "\"a\\x\"" -> "line 1, column 4: the escape \\x, which JSON does not have",
      "\"\\u12G4\"" -> "line 1, column 6: 'G' in a \\u escape, where a hex digit belongs",
      "\"\\u12\"" -> "line 1, column 6: '\"' in a \\u escape, where a hex digit belongs",
      "\"\\u12" -> "line 1, column 6: the text ends inside a \\u escape",
      "\"a\tb\"" -> "line 1, column 3: the control character U+0009 unescaped in a string",
      "{\n  \"a\": [1,\n    2,,\n]}" -> "line 3, column 7: ',' where a value belongs",
      "\u00a0" -> "line 1, column 1: U+00A0 where a value belongs",
      "\"\\u00\uff25\"" -> "line 1, column 6: U+FF25 in a \\u escape, where a hex digit belongs")
    for ((text, message) <- cases) assertEquals(error(text), s"Invalid JSON at $message", text)
  }

  test("a value of the wrong kind, or a missing field, is named in the error") {
    val o = parse("""{"a": "x", "n": [1, 2]}""")
    assertEquals(intercept[JsonException](o("b")).getMessage,
      """no field 'b' in {"a":"x","n":[1,2]}""")
    assertEquals(intercept[JsonException](o("n").text).getMessage,
      "expected a string, number or boolean, found [1,2]")
    assertEquals(intercept[JsonException](o("a").elements).getMessage,
      "expected an array, found \"x\"")
    assertEquals(intercept[JsonException](o.fields.head._2.boolean).getMessage,
      "expected true or false, found \"x\"")
    assertEquals(intercept[JsonException](o("n").fields).getMessage,
      "expected an object, found [1,2]")
    assertEquals(o.field("a").map(_.text), Some("x"))
    assertEquals(o("n").field("a"), None)
  }

  test("the writer checks the order of its calls") {
    def fails(what: String)(calls: JsonWriter => Unit): Unit = {
      val e = intercept[IllegalStateException](calls(new JsonWriter(JsonWriter.Compact)))
      assert(e.getMessage.contains(what), e.getMessage)
    }
    fails("a value where a name belongs")(_.startObject().number(1))
    fails("a field name (a) outside an object")(_.startArray().name("a"))
    fails("a field name (b) outside an object, or after one")(_.startObject().name("a").name("b"))
    fails("']' closes no open array")(_.startObject().endArray())
    fails("'}' closes no open object")(_.startObject().name("a").endObject())
    fails("a second value after a whole one")(_.number(1).number(2))
    fails("the JSON value is not complete")(w => w.startArray().result)
    val w = new JsonWriter(JsonWriter.Compact)
    assertEquals(w.startArray().number(1).endArray().result, "[1]")
    w.reset()
    assertEquals(w.string("again").result, "\"again\"")
  }

  test("Spark's schema JSON reads and writes back unchanged (the manifest's schema_json)") {
    val schema = StructType(Seq(
      StructField("id", LongType, nullable = false),
      StructField("s", StringType, nullable = true,
        new MetadataBuilder().putString("comment", "é \"q\" \n").putLong("big", Long.MinValue)
          .putDouble("x", -1.5e-7).putBoolean("b", true).build()),
      StructField("m", MapType(StringType, ArrayType(DoubleType, containsNull = false))),
      StructField("n", StructType(Seq(StructField("d", DecimalType(20, 3)))))))
    assertEquals(parse(schema.json).compact, schema.json)
    assertEquals(DataType.fromJson(parse(schema.json).indented), schema: DataType)
  }
}
