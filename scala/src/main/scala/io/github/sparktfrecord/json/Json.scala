package io.github.sparktfrecord.json

/**
 * A JSON value, as [[JsonParser]] reads it and [[JsonWriter]] writes it: the tree of the files
 * every write leaves (the manifest, the count files, TFDS's `dataset_info.json` and
 * `features.json`). Our own rather than Jackson's: a user's build may put on the class path a
 * Jackson whose parts do not match (jackson-databind 2.15 with jackson-core 2.12, issue 41), and
 * a write must not depend on that. Numbers keep their text, so that an int64 or a double passes
 * through unchanged; objects keep their fields' order.
 *
 * The accessors read a value the way the files' readers need: [[text]] is a string's value or a
 * number's or boolean's text; [[long]] accepts a number or a string holding one (protobuf's
 * JSON writes int64 as a string); a value of the wrong kind throws a [[JsonException]] that
 * names it.
 */
private[sparktfrecord] sealed abstract class Json {

  /** Field `key` of an object (the last one, if the text has it twice); None for others. */
  def field(key: String): Option[Json] = None

  /** Field `key`, which must be there. */
  final def apply(key: String): Json =
    field(key).getOrElse(throw new JsonException(s"no field '$key' in ${Json.brief(this)}"))

  final def has(key: String): Boolean = field(key).isDefined

  /** The elements of an array. */
  def elements: Seq[Json] = wrong("an array")

  /** The fields of an object, in their order. */
  def fields: Seq[(String, Json)] = wrong("an object")

  /** A string's value, a number's text, `true` or `false`. */
  def text: String = wrong("a string, number or boolean")

  /** A number, or a string holding one, that is an integer within int64. */
  def long: Long = {
    val t = try text
    catch { case _: JsonException => wrong("an integer") }
    try new java.math.BigDecimal(t).longValueExact()
    catch { case _: ArithmeticException | _: NumberFormatException => wrong("an int64") }
  }

  /** A number, or a string holding one, that is an integer within int32. */
  def int: Int = {
    val v = long
    if (v.toInt != v) wrong("an int32")
    v.toInt
  }

  /** A number, or a string holding one (`NaN`, `Infinity` and `-Infinity` too, as in JSON). */
  def double: Double = {
    val t = try text
    catch { case _: JsonException => wrong("a number") }
    try java.lang.Double.parseDouble(t)
    catch { case _: NumberFormatException => wrong("a number") }
  }

  def boolean: Boolean = wrong("true or false")

  def isNull: Boolean = false

  /** This value as compact JSON text. */
  final def compact: String = new JsonWriter(JsonWriter.Compact).value(this).result

  /** This value as JSON text indented by two spaces a level, ending in a line break. */
  final def indented: String = new JsonWriter(JsonWriter.Indented).value(this).result + "\n"

  protected final def wrong(expected: String): Nothing =
    throw new JsonException(s"expected $expected, found ${Json.brief(this)}")
}

private[sparktfrecord] object Json {

  final case class Str(value: String) extends Json {
    override def text: String = value
  }

  /** A number, as its JSON text (which [[JsonParser]] checked, or [[num]] wrote). */
  final case class Num(override val text: String) extends Json

  final case class Bool(value: Boolean) extends Json {
    override def text: String = value.toString
    override def boolean: Boolean = value
  }

  case object Null extends Json {
    override def isNull: Boolean = true
  }

  final case class Arr(override val elements: Vector[Json]) extends Json

  final case class Obj(override val fields: Vector[(String, Json)]) extends Json {
    override def field(key: String): Option[Json] = {
      var i = fields.length - 1
      while (i >= 0) {
        if (fields(i)._1 == key) return Some(fields(i)._2)
        i -= 1
      }
      None
    }

    /** A copy with `value` as field `key`: in place of the field of that name, else last. */
    def updated(key: String, value: Json): Obj = {
      val at = fields.lastIndexWhere(_._1 == key)
      if (at < 0) Obj(fields :+ (key -> value)) else Obj(fields.updated(at, key -> value))
    }
  }

  def obj(fields: (String, Json)*): Obj = Obj(fields.toVector)

  def arr(values: Seq[Json]): Arr = Arr(values.toVector)

  def num(v: Long): Num = Num(v.toString)

  def str(s: String): Str = Str(s)

  /** The start of a value's text, for messages. */
  private def brief(j: Json): String = {
    val t = j.compact
    if (t.length <= 60) t else t.substring(0, 57) + "..."
  }
}
