package io.github.sparktfrecord

import java.nio.{ByteBuffer, CharBuffer}
import java.nio.charset.CodingErrorAction
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import io.github.sparktfrecord.wire.Utf8

/**
 * [[Utf8.isValid]]: well-formed UTF-8 (the Unicode standard's table 3-7), the bytes that Java's
 * decoder with `CodingErrorAction.REPORT` accepts. Each rule is tested on its own, and the whole
 * is compared with Java's decoder on every sequence of up to three bytes, on four-byte ones, and
 * on random bytes.
 */
class Utf8Suite extends UnitSuite {

  private def bytes(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  private def hex(b: Array[Byte]): String = b.map(x => f"${x & 0xff}%02x").mkString(" ")

  private def valid(b: Array[Byte]): Boolean = Utf8.isValid(b, 0, b.length)

  // Java's strict decoder, reused: a CoderResult instead of an exception per invalid input.
  private val decoder =
    UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT)
      .onUnmappableCharacter(CodingErrorAction.REPORT)
  private val chars = CharBuffer.allocate(64)

  /** Whether Java's decoder accepts `b` (at most 64 bytes) as a whole input. */
  private def javaValid(b: Array[Byte]): Boolean = {
    require(b.length <= chars.capacity)
    decoder.reset()
    chars.clear()
    val decoded = decoder.decode(ByteBuffer.wrap(b), chars, true)
    assert(!decoded.isOverflow)
    !decoded.isError && !decoder.flush(chars).isError
  }

  /** The encoding of `cp` in `n` bytes by the bit layout alone: overlong or out of range too. */
  private def encode(cp: Int, n: Int): Array[Byte] = n match {
    case 1 => bytes(cp)
    case 2 => bytes(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f))
    case 3 => bytes(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f))
    case 4 =>
      bytes(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f),
        0x80 | (cp & 0x3f))
  }

  /** The shortest length that encodes `cp`. */
  private def length(cp: Int): Int =
    if (cp < 0x80) 1 else if (cp < 0x800) 2 else if (cp < 0x10000) 3 else 4

  private val surrogates = 0xd800 to 0xdfff

  /** Every scalar value (code point but surrogates), and what Java encodes it as. */
  private def scalars: Iterator[(Int, Array[Byte])] =
    Iterator.range(0, 0x110000).filterNot(surrogates.contains)
      .map(cp => cp -> new String(Character.toChars(cp)).getBytes(UTF_8))

  test("the empty range and ASCII") {
    assert(valid(Array.emptyByteArray))
    for (b <- 0 until 0x80) assert(valid(bytes(b)), b)
    assert(valid("plain text, 0-9 and ~".getBytes(UTF_8)))
  }

  test("every scalar value U+0000..U+10FFFF, in its shortest form, is valid") {
    for ((cp, utf8) <- scalars) {
      assertEquals(utf8.toSeq, encode(cp, length(cp)).toSeq, f"U+$cp%04X")
      assert(valid(utf8), f"U+$cp%04X: ${hex(utf8)}")
    }
    // Each length's first and last, together in one range.
    val edges = Seq(0x0, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000,
      0x10ffff).flatMap(cp => encode(cp, length(cp))).toArray
    assert(valid(edges), hex(edges))
    // e acute, o umlaut, the euro sign, G clef (U+1D11E: a surrogate pair in Java), three CJK.
    assert(valid("h\u00e9llo w\u00f6rld \u20ac\ud834\udd1e \u65e5\u672c\u8a9e".getBytes(UTF_8)))
  }

  test("overlong forms of every length are invalid (C0, C1, E0 80..9F, F0 80..8F)") {
    for (cp <- 0 until 0x80) assert(!valid(encode(cp, 2)), hex(encode(cp, 2)))
    for (cp <- 0 until 0x800) assert(!valid(encode(cp, 3)), hex(encode(cp, 3)))
    for (cp <- 0 until 0x10000) assert(!valid(encode(cp, 4)), hex(encode(cp, 4)))
    // Modified UTF-8's NUL (Java's DataOutput) is an overlong too.
    assert(!valid(bytes(0x61, 0xc0, 0x80, 0x62)))
  }

  test("encoded surrogates are invalid, alone or paired (CESU-8)") {
    for (cp <- surrogates) assert(!valid(encode(cp, 3)), f"U+$cp%04X")
    // U+1F600 as the UTF-16 pair D83D DE00, each half encoded on its own.
    assert(!valid(encode(0xd83d, 3) ++ encode(0xde00, 3)))
    // The neighbours are scalar values.
    assert(valid(encode(0xd7ff, 3)) && valid(encode(0xe000, 3)))
  }

  test("nothing above U+10FFFF: F4 90.., leads F5..FF, the old five- and six-byte forms") {
    for (cp <- Seq(0x110000, 0x110001, 0x13ffff, 0x140000, 0x1fffff)) {
      assert(!valid(encode(cp, 4)), f"U+$cp%X: ${hex(encode(cp, 4))}")
    }
    for (lead <- 0xf5 to 0xff) assert(!valid(bytes(lead, 0x80, 0x80, 0x80)), lead)
    assert(!valid(bytes(0xf8, 0x88, 0x80, 0x80, 0x80)))
    assert(!valid(bytes(0xfc, 0x84, 0x80, 0x80, 0x80, 0x80)))
  }

  test("continuation bytes: none alone, and each one a sequence needs is 80..BF") {
    for (c <- 0x80 to 0xbf) {
      assert(!valid(bytes(c)), c)
      assert(!valid(bytes(0x61, c)), c)
    }
    // One sample per length and per range of the second byte; every position, every wrong byte.
    val samples = Seq(0x80, 0x7ff, 0x800, 0xfff, 0x1000, 0xd7ff, 0xe000, 0xffff, 0x10000,
      0x3ffff, 0x40000, 0xfffff, 0x100000, 0x10ffff).map(cp => encode(cp, length(cp)))
    for (s <- samples; at <- 1 until s.length; wrong <- (0 until 0x80) ++ (0xc0 to 0xff)) {
      val b = s.clone()
      b(at) = wrong.toByte
      assert(!valid(b), hex(b))
    }
  }

  test("a sequence cut short is invalid, at the end of the range or before other bytes") {
    for ((_, utf8) <- scalars if utf8.length > 1; cut <- 1 until utf8.length) {
      val prefix = utf8.take(cut)
      assert(!valid(prefix), hex(prefix))
      assert(!valid(prefix :+ 0x41.toByte), hex(prefix))
      assert(!valid(prefix ++ utf8), hex(prefix))
    }
  }

  test("only [off, off + len) counts") {
    val framed = bytes(0xff, 0x61, 0xc3, 0xa9, 0xff)
    assert(Utf8.isValid(framed, 1, 3))
    assert(!Utf8.isValid(framed, 1, 2)) // the range ends inside the e acute (c3 a9)
    assert(!Utf8.isValid(framed, 0, 4))
    assert(!Utf8.isValid(framed, 3, 1)) // the range starts inside the e acute
    for (off <- 0 to framed.length) assert(Utf8.isValid(framed, off, 0), off)
    // A four-byte sequence that the range cuts at each of its bytes.
    val emoji = bytes(0x20) ++ encode(0x1f600, 4) ++ bytes(0x20)
    assert(Utf8.isValid(emoji, 1, 4))
    for (len <- 1 to 3) assert(!Utf8.isValid(emoji, 1, len), len)
  }

  test("agrees with Java's decoder on every sequence of up to three bytes") {
    assertEquals(valid(Array.emptyByteArray), javaValid(Array.emptyByteArray))
    var disagreements = List.empty[String]
    def check(b: Array[Byte]): Unit =
      if (valid(b) != javaValid(b) && disagreements.size < 10) disagreements ::= hex(b)
    for (a <- 0 until 256) {
      check(bytes(a))
      for (b <- 0 until 256) {
        check(bytes(a, b))
        for (c <- 0 until 256) check(bytes(a, b, c))
      }
    }
    assertEquals(disagreements, Nil)
  }

  test("agrees with Java's decoder on four-byte sequences and on random bytes") {
    val around = Seq(0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xf4, 0xff)
    for (lead <- 0xf0 to 0xff; second <- 0 until 256; third <- around; fourth <- around) {
      val b = bytes(lead, second, third, fourth)
      assertEquals(valid(b), javaValid(b), hex(b))
    }
    // Mostly lead and continuation bytes: the mixes that make and break sequences.
    val random = new Random(7)
    for (_ <- 0 until 200000) {
      val b = Array.fill(random.nextInt(12)) {
        val r = random.nextInt(10)
        (if (r < 3) random.nextInt(0x80)
         else if (r < 6) 0x80 + random.nextInt(0x40)
         else 0xc0 + random.nextInt(0x40)).toByte
      }
      assertEquals(valid(b), javaValid(b), hex(b))
    }
  }
}
