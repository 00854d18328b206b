package io.github.sparktfrecord.codec

import java.math.{BigDecimal => JBigDecimal, MathContext, RoundingMode}

/**
 * A float32 as text: `Float.toString` as JDK 19 and later specify it (Raffaello Giulietti's
 * shortest decimal), computed here so that a row does not depend on the JVM that reads it. JDK
 * 17's `Float.toString` (`FloatingDecimal`) sometimes writes more digits than the shortest
 * (`9.9999998E17` for `1e18f`, `1.17549435E-38` for `Float.MIN_NORMAL`), and the Python codec
 * (`conversions.java_float`) writes the shortest.
 *
 * The decimal written: of those that round to the float (its rounding interval, both ends
 * included when its significand is even), those of the fewest significant digits, but at least
 * two; of them the closest to the float's exact value; of two as close, the one whose last digit
 * is even. Laid out as Java lays it out: `d.ddd` for 10^-3^ <= |v| < 10^7^, else `d.dddE<n>`,
 * with at least one digit after the point; `NaN`, `Infinity`, `-Infinity`, `0.0`, `-0.0`.
 *
 * Each length of 2 to 9 digits is tried in turn with exact arithmetic (`BigDecimal`): a float's
 * exact value has at most 105 significant digits, and 9 always suffice. About 1 to 4 µs a value.
 */
private[sparktfrecord] object FloatText {
  // Rounding to p significant digits downwards and upwards: the two p-digit decimals nearest to
  // the exact value, of which any p-digit decimal in the interval is the nearer on its side.
  private val Floor = Array.tabulate(10)(p => new MathContext(p, RoundingMode.FLOOR))
  private val Ceiling = Array.tabulate(10)(p => new MathContext(p, RoundingMode.CEILING))
  private val Half = JBigDecimal.valueOf(5, 1)

  /** `v` as JDK 19's `Float.toString(v)` writes it, on any JVM. */
  def text(v: Float): String = {
    if (v.isNaN) "NaN"
    else if (v.isInfinite) if (v > 0) "Infinity" else "-Infinity"
    else if (v == 0f) if (java.lang.Float.floatToRawIntBits(v) < 0) "-0.0" else "0.0"
    else layout(v < 0, shortest(Math.abs(v)))
  }

  /** The decimal chosen for a finite `a > 0`. */
  private def shortest(a: Float): JBigDecimal = {
    val exact = new JBigDecimal(a.toDouble) // exact: a float is a double
    val low = midpoint(exact, Math.nextDown(a))
    val high =
      if (a == Float.MaxValue) exact.add(new JBigDecimal(Math.ulp(a).toDouble).multiply(Half))
      else midpoint(exact, Math.nextUp(a))
    // A decimal at an end of the interval rounds to the float of even significand.
    val ends = (java.lang.Float.floatToRawIntBits(a) & 1) == 0
    def within(d: JBigDecimal): Boolean = {
      val l = d.compareTo(low)
      val h = d.compareTo(high)
      (l > 0 || ends && l == 0) && (h < 0 || ends && h == 0)
    }
    // From two digits: where one would do, the spec chooses among the decimals of one or two
    // digits, which are the two-digit ones (1E18 is 1.0E18).
    var digits = 2
    while (digits <= 9) {
      val below = exact.round(Floor(digits))
      val above = exact.round(Ceiling(digits))
      val belowIn = within(below)
      val aboveIn = within(above)
      if (belowIn || aboveIn) {
        if (!aboveIn) return below
        if (!belowIn) return above
        val toBelow = exact.subtract(below).compareTo(above.subtract(exact))
        if (toBelow < 0) return below
        if (toBelow > 0) return above
        return if (even(below, digits)) below else above
      }
      digits += 1
    }
    throw new IllegalStateException(s"no decimal of 9 digits reads back as $a") // never: 9 do
  }

  /** The exact midpoint between two adjacent floats, one of them `exact`. */
  private def midpoint(exact: JBigDecimal, other: Float): JBigDecimal =
    exact.add(new JBigDecimal(other.toDouble)).multiply(Half)

  /** Whether `d`'s last digit, written with `digits` significant digits, is even. */
  private def even(d: JBigDecimal, digits: Int): Boolean =
    d.precision < digits || !d.unscaledValue.testBit(0)

  /** `d` (> 0) laid out as Java does, after a sign. */
  private def layout(negative: Boolean, d: JBigDecimal): String = {
    val stripped = d.stripTrailingZeros
    val digits = stripped.unscaledValue.toString
    val exponent = digits.length - 1 - stripped.scale // d = d.ddd * 10^exponent
    val out = new java.lang.StringBuilder(16)
    if (negative) out.append('-')
    if (exponent >= 0 && exponent < 7) {
      val whole = exponent + 1
      if (digits.length <= whole) {
        out.append(digits)
        var z = digits.length
        while (z < whole) { out.append('0'); z += 1 }
        out.append(".0")
      } else out.append(digits, 0, whole).append('.').append(digits, whole, digits.length)
    } else if (exponent < 0 && exponent >= -3) {
      out.append("0.")
      var z = -exponent - 1
      while (z > 0) { out.append('0'); z -= 1 }
      out.append(digits)
    } else {
      out.append(digits.charAt(0)).append('.')
      if (digits.length == 1) out.append('0') else out.append(digits, 1, digits.length)
      out.append('E').append(exponent)
    }
    out.toString
  }
}
