package io.github.sparktfrecord

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

/**
 * Protobuf bytes built by hand for the tests, written from the wire format's definition rather
 * than with [[ProtoWire]], so that the two check each other: fields of every wire type, and the
 * `tf.train` messages (defined in [[ExampleWalker]]'s scaladoc) made of them.
 */
object ProtoBytes {
  def cat(parts: Array[Byte]*): Array[Byte] = Array.concat(parts: _*)

  /** `"0a 01 ff"` as bytes. */
  def hex(s: String): Array[Byte] =
    s.trim.split("\\s+").filter(_.nonEmpty).map(b => Integer.parseInt(b, 16).toByte)

  def toHex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString(" ")

  def utf8(s: String): Array[Byte] = s.getBytes(UTF_8)

  /** Seven bits at a time, low first, the high bit set on every byte but the last. */
  def varint(value: Long): Array[Byte] = {
    val out = new ByteArrayOutputStream
    var v = value
    while (v < 0 || v > 0x7f) {
      out.write((v & 0x7f).toInt | 0x80)
      v >>>= 7
    }
    out.write(v.toInt)
    out.toByteArray
  }

  def le32(bits: Int): Array[Byte] = Array.tabulate(4)(i => (bits >>> (8 * i)).toByte)
  def le64(bits: Long): Array[Byte] = Array.tabulate(8)(i => (bits >>> (8 * i)).toByte)

  def key(field: Int, wireType: Int): Array[Byte] = varint((field.toLong << 3) | wireType)
  def varintField(field: Int, value: Long): Array[Byte] = cat(key(field, 0), varint(value))
  def fixed64Field(field: Int, bits: Long): Array[Byte] = cat(key(field, 1), le64(bits))
  def fixed32Field(field: Int, bits: Int): Array[Byte] = cat(key(field, 5), le32(bits))

  /** A length-delimited field holding the concatenation of `content`. */
  def field(field: Int, content: Array[Byte]*): Array[Byte] = {
    val c = cat(content: _*)
    cat(key(field, 2), varint(c.length), c)
  }

  def group(field: Int, content: Array[Byte]*): Array[Byte] =
    cat(key(field, 3), cat(content: _*), key(field, 4))

  // The contents of Int64List, FloatList and BytesList.
  def packedInt64(values: Long*): Array[Byte] = field(1, values.map(varint): _*)
  def unpackedInt64(values: Long*): Array[Byte] = cat(values.map(varintField(1, _)): _*)
  def packedFloat(values: Float*): Array[Byte] =
    field(1, values.map(v => le32(java.lang.Float.floatToRawIntBits(v))): _*)
  def unpackedFloat(values: Float*): Array[Byte] =
    cat(values.map(v => fixed32Field(1, java.lang.Float.floatToRawIntBits(v))): _*)
  def bytesValues(values: String*): Array[Byte] = cat(values.map(v => field(1, utf8(v))): _*)

  // The fields of a Feature (its oneof kind), around a list's content.
  def bytesList(content: Array[Byte]*): Array[Byte] = field(1, content: _*)
  def floatList(content: Array[Byte]*): Array[Byte] = field(2, content: _*)
  def int64List(content: Array[Byte]*): Array[Byte] = field(3, content: _*)

  /** A map entry field (of Features or FeatureLists): key, then the value message's content. */
  def entry(name: String, value: Array[Byte]): Array[Byte] =
    field(1, field(1, utf8(name)), field(2, value))

  /** An Example: one `features` field holding these entries. */
  def example(entries: Array[Byte]*): Array[Byte] = field(1, entries: _*)

  /** A FeatureList's content: one `feature` field per step. */
  def steps(features: Array[Byte]*): Array[Byte] = cat(features.map(field(1, _)): _*)

  /** A SequenceExample: a `context` field and a `feature_lists` field, each left out when empty. */
  def sequenceExample(context: Seq[Array[Byte]], lists: Seq[Array[Byte]]): Array[Byte] =
    cat((if (context.isEmpty) Array.emptyByteArray else field(1, context: _*)),
      (if (lists.isEmpty) Array.emptyByteArray else field(2, lists: _*)))
}
