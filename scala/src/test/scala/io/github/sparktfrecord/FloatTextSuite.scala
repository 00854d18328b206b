package io.github.sparktfrecord

import io.github.sparktfrecord.codec.FloatText

/**
 * A float32's text: JDK 19's `Float.toString` on any JVM (the cases' texts are JDK 25's), and on
 * random floats text that reads back as the float and is no longer than this JVM's.
 */
class FloatTextSuite extends UnitSuite {

  /** Floats by their bits and JDK 25's `Float.toString` of them. */
  private val cases: Seq[(Int, String)] = Seq(
    0x5d5e0b6b -> "1.0E18", // 1e18f; JDK 17: 9.9999998E17
    0x00800000 -> "1.1754944E-38", // Float.MIN_NORMAL; JDK 17: 1.17549435E-38
    0x5c57532b -> "2.4243426E17", // JDK 17: 2.42434257E17
    0x50000000 -> "8.589935E9", // 2^33; JDK 17: 8.5899346E9
    0x00000001 -> "1.4E-45", // Float.MIN_VALUE
    0x00000003 -> "4.2E-45",
    0x00000006 -> "8.4E-45",
    0x00000007 -> "9.8E-45",
    0x0000000e -> "2.0E-44", // 2e-44f: one digit would do; the nearer of two is 2.0
    0x00000015 -> "2.9E-44",
    0x7f7fffff -> "3.4028235E38", // Float.MAX_VALUE
    0x7f000000 -> "1.7014118E38",
    0x3dcccccd -> "0.1",
    0x3e99999a -> "0.3",
    0x3a83126f -> "0.001", // 1e-3f: the smallest plain layout
    0x3a83126e -> "9.999999E-4", // the float below it
    0x4b18967f -> "9999999.0", // the largest plain layout
    0x4b189680 -> "1.0E7",
    0x47f12065 -> "123456.79",
    0x42c80000 -> "100.0",
    0x3f000000 -> "0.5",
    0xc0200000 -> "-2.5",
    0x4c000000 -> "3.3554432E7",
    0x3727c5ac -> "1.0E-5",
    0x501502f9 -> "1.0E10",
    0x33800000 -> "5.9604645E-8",
    0x65a96816 -> "1.0E23",
    0x80000000 -> "-0.0",
    0x00000000 -> "0.0",
    0x7fc00000 -> "NaN",
    0x7f800000 -> "Infinity",
    0xff800000 -> "-Infinity")

  test("the texts of JDK 19 and later, whatever the JVM") {
    for ((bits, text) <- cases) {
      val v = java.lang.Float.intBitsToFloat(bits)
      assertEquals(FloatText.text(v), text, f"bits $bits%08x")
      val negated = if (text.startsWith("-")) text.substring(1) else "-" + text
      if (!v.isNaN) assertEquals(FloatText.text(-v), negated, f"bits $bits%08x negated")
    }
  }

  test("random floats read back and are no longer than this JVM's Float.toString") {
    val random = new scala.util.Random(19)
    var n = 0
    while (n < 200000) {
      val v = java.lang.Float.intBitsToFloat(random.nextInt())
      val text = FloatText.text(v)
      val back = java.lang.Float.parseFloat(text)
      if (v.isNaN) assert(back.isNaN, text)
      else
        assertEquals(
          java.lang.Float.floatToRawIntBits(back),
          java.lang.Float.floatToRawIntBits(v),
          text)
      val jvm = java.lang.Float.toString(v)
      assert(significant(text) <= significant(jvm), s"$text is longer than $jvm")
      // Java's layout: plain from 10^-3 to 10^7, the exponent's form elsewhere
      val magnitude = Math.abs(v)
      val plain = magnitude >= 1e-3f && magnitude < 1e7f || magnitude == 0f
      if (!v.isNaN && !v.isInfinite) assertEquals(!text.contains('E'), plain, text)
      n += 1
    }
  }

  /** The significant digits of a `Float.toString` text (at least the two of `d.d`). */
  private def significant(text: String): Int = {
    val mantissa = text.takeWhile(_ != 'E').filter(_.isDigit).dropWhile(_ == '0')
    math.max(2, mantissa.reverse.dropWhile(_ == '0').length)
  }
}
