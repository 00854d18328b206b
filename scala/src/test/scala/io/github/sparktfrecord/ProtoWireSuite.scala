package io.github.sparktfrecord

import scala.util.Random

import io.github.sparktfrecord.wire.{FeatureIndex, FeatureValueReader, ProtoWire, WireCursor}

/** The wire codec: varints on every path of [[WireCursor.readVarint]], fixed widths, skipping. */
class ProtoWireSuite extends UnitSuite {
  import ProtoBytes._
  import ProtoWire._

  /** 0, 1, 2^(7k) - 1 and 2^(7k) for k = 1..9 (every varint length, both sides), -1, extremes. */
  private val boundaries: Seq[Long] = Seq(0L, 1L, -1L, Long.MinValue, Long.MaxValue) ++
    (1 to 9).flatMap(k => Seq((1L << (7 * k)) - 1, 1L << (7 * k)))

  /** The varint at `pos` by its definition: Right((value, end)), or Left(why it is malformed). */
  private def reference(buf: Array[Byte], pos: Int, limit: Int): Either[String, (Long, Int)] = {
    var result = 0L
    var p = pos
    var shift = 0
    while (shift < 64) {
      if (p >= limit) return Left("varint runs past its message")
      val b = buf(p)
      p += 1
      result |= (b & 0x7fL) << shift
      if ((b & 0x80) == 0) return Right((result, p))
      shift += 7
    }
    Left("varint longer than 10 bytes")
  }

  private def cursor(buf: Array[Byte], pos: Int = 0): WireCursor = {
    val c = new WireCursor
    c.buf = buf
    c.pos = pos
    c
  }

  /** Reads a varint at `pos` before `limit`: Right((value, end)) or Left((message, position)). */
  private def read(buf: Array[Byte], pos: Int, limit: Int): Either[(String, Int), (Long, Int)] = {
    val c = cursor(buf, pos)
    try {
      val v = c.readVarint(limit)
      Right((v, c.pos))
    } catch {
      case e: WireFormatException => Left((e.getMessage, e.position))
    }
  }

  test("varintSize: every length from 1 to 10 at its boundaries") {
    assertEquals(varintSize(0L), 1)
    for (k <- 1 to 9) {
      assertEquals(varintSize((1L << (7 * k)) - 1), k, s"2^${7 * k} - 1")
      assertEquals(varintSize(1L << (7 * k)), k + 1, s"2^${7 * k}")
    }
    assertEquals(varintSize(Long.MaxValue), 9)
    assertEquals(varintSize(-1L), 10)
    assertEquals(varintSize(Long.MinValue), 10)
    // The Int overload is for lengths: the same sizes as the value widened.
    for (n <- Seq(0, 1, 127, 128, 16383, 16384, (1 << 21) - 1, 1 << 21, (1 << 28) - 1, 1 << 28,
        Int.MaxValue)) {
      assertEquals(varintSize(n), varintSize(n.toLong), s"$n")
    }
    for (v <- boundaries) assertEquals(varintSize(v), varint(v).length, s"$v")
  }

  test("writeVarint writes protobuf's bytes, where asked, and nothing after them") {
    for (v <- boundaries) {
      val buf = Array.fill[Byte](16)(0x55)
      val end = writeVarint(buf, 3, v)
      val expected = varint(v)
      assertEquals(end, 3 + expected.length, s"$v")
      assertEquals(toHex(buf.slice(3, end)), toHex(expected), s"$v")
      assert(buf.take(3).forall(_ == 0x55) && buf.drop(end).forall(_ == 0x55), s"$v")
    }
    assertEquals(toHex(varint(300)), "ac 02")
    assertEquals(toHex(varint(-1L)), "ff ff ff ff ff ff ff ff ff 01")
  }

  /** Content lengths at every varint length's boundaries, up to the largest a record holds. */
  private val lengths: Seq[Long] = Seq(0L, 1L, 127L, 128L, 16383L, 16384L, (1L << 21) - 1,
    1L << 21, (1L << 28) - 1, 1L << 28, Int.MaxValue.toLong, 1L << 35)

  test("lengthDelimitedSize: a one-byte tag, the length's varint, the content") {
    for (f <- 1 to 15; n <- Seq(0, 1, 127, 128, 300, 16384)) {
      assertEquals(lengthDelimitedSize(n), field(f, new Array[Byte](n)).length.toLong,
        s"field $f, $n bytes")
    }
    for (n <- lengths) assertEquals(lengthDelimitedSize(n), 1 + varint(n).length + n, s"$n")
    // Past an Int, as a sum of sizes may be: no wrap.
    assertEquals(lengthDelimitedSize(Int.MaxValue.toLong), 1L + 5 + Int.MaxValue)
  }

  test("writeTagAndLength writes a field's tag and length, where asked, and nothing after them") {
    for (f <- 1 to 15; n <- lengths) {
      val buf = Array.fill[Byte](16)(0x55)
      val end = writeTagAndLength(buf, 2, f, n)
      val expected = cat(key(f, WireLengthDelimited), varint(n))
      assertEquals(toHex(buf.slice(2, end)), toHex(expected), s"field $f, $n bytes")
      assertEquals(end - 2 + n, lengthDelimitedSize(n), s"field $f, $n bytes")
      assert(buf.take(2).forall(_ == 0x55) && buf.drop(end).forall(_ == 0x55), s"$f $n")
    }
    // The bytes protobuf writes for a field around its content, read back by the cursor.
    val content = utf8("hello")
    val buf = new Array[Byte](lengthDelimitedSize(content.length).toInt)
    val at = writeTagAndLength(buf, 0, 3, content.length)
    System.arraycopy(content, 0, buf, at, content.length)
    assertEquals(toHex(buf), toHex(field(3, content)))
    val c = cursor(buf)
    assertEquals(c.readVarint(buf.length), tag(3, WireLengthDelimited).toLong)
    assertEquals(c.readLengthEnd(buf.length), buf.length)
    assertEquals(c.pos, at)
  }

  test("readVarint: every length at its boundaries, wherever it lies in the array") {
    val pads = Seq(Array.emptyByteArray, Array.fill[Byte](16)(0), Array.fill[Byte](16)(-128),
      Array.fill[Byte](3)(-1))
    for (v <- boundaries; before <- Seq(0, 1, 5, 9); after <- pads) {
      val bytes = varint(v)
      val buf = cat(Array.fill[Byte](before)(-1), bytes, after)
      val end = before + bytes.length
      // The limit at the varint's end (eight-byte reads would cross it) and at the array's end.
      for (limit <- Seq(end, buf.length)) {
        assertEquals(read(buf, before, limit), Right((v, end)),
          s"$v at $before of ${buf.length}, limit $limit")
      }
    }
  }

  test("readVarint: a varint running past its limit fails there, however the array goes on") {
    for (v <- boundaries; after <- Seq(0, 1, 16)) {
      val bytes = varint(v)
      val buf = cat(Array[Byte](7), bytes, Array.fill[Byte](after)(0))
      for (cut <- 0 until bytes.length) {
        val limit = 1 + cut
        assertEquals(read(buf, 1, limit), Left(("varint runs past its message", limit)),
          s"$v cut after $cut of ${bytes.length} bytes")
      }
    }
  }

  test("readVarint: a 10th byte holds bit 63 only; an 11-byte varint is refused") {
    val nines = Array.fill[Byte](9)(-1)
    assertEquals(read(cat(nines, Array[Byte](1)), 0, 10), Right((-1L, 10)))
    assertEquals(read(cat(Array.fill[Byte](9)(-128), Array[Byte](1)), 0, 10),
      Right((Long.MinValue, 10)))
    // Bits past the 64th are dropped, as protobuf drops them.
    assertEquals(read(cat(nines, Array[Byte](0x7f), Array.fill[Byte](8)(0)), 0, 18),
      Right((-1L, 10)))
    for (after <- Seq(0, 1, 8)) {
      val eleven = cat(Array.fill[Byte](10)(-1), Array[Byte](1), Array.fill[Byte](after)(0))
      assertEquals(read(eleven, 0, eleven.length), Left(("varint longer than 10 bytes", 10)))
    }
    // Ten continuation bytes that end at the limit are refused as well.
    assertEquals(read(Array.fill[Byte](12)(-1), 0, 10), Left(("varint longer than 10 bytes", 10)))
  }

  test("readVarint agrees with the definition on random bytes, positions and limits") {
    val random = new Random(12)
    for (_ <- 1 to 20000) {
      val n = random.nextInt(24)
      // Mostly continuation bytes, so that long and malformed varints are common.
      val buf = Array.fill[Byte](n) {
        val low = random.nextInt(128)
        (if (random.nextInt(4) == 0) low else low | 0x80).toByte
      }
      val pos = if (n == 0) 0 else random.nextInt(n)
      val limit = pos + random.nextInt(n - pos + 1)
      val expected = reference(buf, pos, limit) match {
        case Right(r) => Right(r)
        case Left(why) =>
          Left((why, if (why.contains("runs past")) limit else pos + 10))
      }
      assertEquals(read(buf, pos, limit), expected, s"${toHex(buf)} at $pos, limit $limit")
    }
  }

  test("readVarint reads random values of every bit length written by writeVarint") {
    val random = new Random(34)
    for (_ <- 1 to 20000) {
      val bits = random.nextInt(65)
      val v = if (bits == 0) 0L else random.nextLong() >>> (64 - bits)
      val buf = new Array[Byte](random.nextInt(12) + 10 + random.nextInt(12))
      random.nextBytes(buf)
      val pos = random.nextInt(buf.length - 10 + 1)
      val end = writeVarint(buf, pos, v)
      val limit = end + random.nextInt(buf.length - end + 1)
      assertEquals(read(buf, pos, limit), Right((v, end)), s"$v at $pos, limit $limit")
    }
  }

  test("countVarints counts the bytes that end a varint, between its bounds only") {
    val random = new Random(56)
    for (_ <- 1 to 5000) {
      val buf = new Array[Byte](random.nextInt(40))
      random.nextBytes(buf)
      val from = random.nextInt(buf.length + 1)
      val until = from + random.nextInt(buf.length - from + 1)
      assertEquals(countVarints(buf, from, until), buf.slice(from, until).count(_ >= 0),
        s"${toHex(buf)} [$from, $until)")
    }
    val packed = cat(boundaries.map(varint): _*)
    assertEquals(countVarints(packed, 0, packed.length), boundaries.length)
  }

  test("fixed32 and fixed64 are little endian, and writeFixed32 reads back") {
    assertEquals(readFixed32(hex("01 02 03 04"), 0), 0x04030201)
    assertEquals(readFixed32(hex("00 ff ff ff ff"), 1), -1)
    assertEquals(readFixed32(hex("00 00 00 80"), 0), Int.MinValue)
    assertEquals(readFixed64(hex("01 02 03 04 05 06 07 08"), 0), 0x0807060504030201L)
    assertEquals(readFixed64(hex("ff ff ff ff 00 00 00 80"), 0), Long.MinValue + 0xffffffffL)
    val buf = new Array[Byte](6)
    assertEquals(writeFixed32(buf, 1, 0x89abcdef), 5)
    assertEquals(toHex(buf), "00 ef cd ab 89 00")
    assertEquals(readFixed32(buf, 1), 0x89abcdef)
  }

  test("readLengthEnd: the end of the delimited bytes, refused past the limit or negative") {
    val c = cursor(hex("03 61 62 63 64"))
    assertEquals(c.readLengthEnd(5), 4)
    assertEquals(c.pos, 1)
    assertEquals(cursor(hex("04 61 62 63 64")).readLengthEnd(5), 5)
    def failure(bytes: Array[Byte], limit: Int): (String, Int) = {
      val e = intercept[WireFormatException](cursor(bytes, 1).readLengthEnd(limit))
      (e.getMessage, e.position)
    }
    assertEquals(failure(hex("00 05 61 62 63 64"), 6), ("length 5 runs past its message", 1))
    assertEquals(failure(hex("00 03 61 62 63 64"), 4), ("length 3 runs past its message", 1))
    assertEquals(failure(cat(Array[Byte](0), varint(-1L)), 11),
      ("length -1 runs past its message", 1))
    assertEquals(failure(cat(Array[Byte](0), varint(1L << 40)), 7),
      (s"length ${1L << 40} runs past its message", 1))
    assertEquals(failure(hex("00 80 80"), 3), ("varint runs past its message", 3))
  }

  test("skipField: each wire type, and a value running past the limit") {
    def skipped(wireType: Int, value: Array[Byte], limit: Int = -1): Int = {
      val buf = cat(value, hex("7f 7f"))
      val c = cursor(buf)
      c.skipField(wireType, if (limit < 0) buf.length else limit)
      c.pos
    }
    assertEquals(skipped(WireVarint, varint(-1L)), 10)
    assertEquals(skipped(WireFixed64, le64(-1L)), 8)
    assertEquals(skipped(WireFixed32, le32(-1)), 4)
    assertEquals(skipped(WireLengthDelimited, cat(varint(200), new Array[Byte](200))), 202)
    assertEquals(skipped(WireFixed64, le64(1L), limit = 8), 8)
    def failure(wireType: Int, value: Array[Byte], limit: Int): (String, Int) = {
      val e = intercept[WireFormatException](cursor(value).skipField(wireType, limit))
      (e.getMessage, e.position)
    }
    assertEquals(failure(WireFixed64, le64(1L), 7), ("8-byte field runs past its message", 0))
    assertEquals(failure(WireFixed32, le32(1), 3), ("4-byte field runs past its message", 0))
    assertEquals(failure(WireVarint, hex("80 80 01"), 2), ("varint runs past its message", 2))
    assertEquals(failure(WireLengthDelimited, hex("05 00 00 00 00 00"), 5),
      ("length 5 runs past its message", 0))
  }

  test("skipField: groups, nested, to just after their end") {
    val content = cat(varintField(1, 5), field(2, utf8("x")), fixed32Field(3, 1),
      fixed64Field(4, 2), group(5, varintField(1, 1), group(6)), varintField(7, 300))
    val buf = cat(group(9, content), hex("7f"))
    val c = cursor(buf, key(9, WireStartGroup).length)
    c.skipField(WireStartGroup, buf.length)
    assertEquals(c.pos, buf.length - 1)
    // Without its end group, a group runs to the limit.
    val open = cat(key(9, WireStartGroup), content)
    val e = intercept[WireFormatException](cursor(open, 1).skipField(WireStartGroup, open.length))
    assertEquals((e.getMessage, e.position), ("varint runs past its message", open.length))
  }

  test("skipField: wire types 6 and 7, and an end group without a start, are invalid") {
    for (wireType <- Seq(6, 7, WireEndGroup)) {
      val e = intercept[WireFormatException](cursor(hex("00 00"), 1).skipField(wireType, 2))
      assertEquals((e.getMessage, e.position), (s"invalid wire type $wireType", 1))
    }
    val inGroup = cat(key(1, WireStartGroup), key(2, 6), hex("00"), key(1, WireEndGroup))
    val e = intercept[WireFormatException](cursor(inGroup, 1).skipField(WireStartGroup, 4))
    assertEquals((e.getMessage, e.position), ("invalid wire type 6", 2))
  }

  test("tag and the Kind constants are Feature's field numbers") {
    assertEquals(tag(1, WireLengthDelimited), 0x0a)
    assertEquals(tag(KindInt64, WireLengthDelimited), 0x1a)
    assertEquals(tag(2, WireFixed32), 0x15)
    assertEquals(KindNames.toSeq, Seq("unset", "bytes_list", "float_list", "int64_list"))
  }

  test("bufferLength: the power of two at or above n, 16 at least, n past 2^30") {
    import FeatureValueReader.bufferLength
    val cases = Seq(0 -> 16, 1 -> 16, 16 -> 16, 17 -> 32, 1000 -> 1024, 1024 -> 1024,
      (1 << 30) -> (1 << 30), ((1 << 30) + 1) -> ((1 << 30) + 1), Int.MaxValue -> Int.MaxValue)
    cases.foreach { case (n, length) => assertEquals(bufferLength(n), length, s"n = $n") }
    // A list that grows by one value a record reallocates its buffer 7 times in 1,000 records.
    assertEquals((1 to 1000).map(bufferLength).distinct.length, 7)
  }

  test("a name index finds every name, the first of a name given twice, and nothing else") {
    // 1,000 names (the wide-1000 schema's), some twice, nulls between: many share a probe run.
    val names = (0 until 1000).map(i => f"w$i%04d") ++ Seq("w0007", null, "", "w0999", "x")
    val index = new FeatureIndex(names.toArray)
    def find(name: String): Int = {
      val bytes = ("..." + name + "..").getBytes("UTF-8") // within a larger buffer
      index.find(bytes, 3, bytes.length - 5)
    }
    for (i <- 0 until 1000) assertEquals(find(f"w$i%04d"), i)
    assertEquals(find(""), 1002)
    assertEquals(find("x"), 1004)
    for (absent <- Seq("w1000", "w000", "w00000", "y", "W0001")) assertEquals(find(absent), -1)
  }
}
