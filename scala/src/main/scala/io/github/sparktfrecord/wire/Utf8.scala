package io.github.sparktfrecord.wire

/**
 * Well-formed UTF-8 as the Unicode standard defines it (table 3-7), which is what Java's decoder
 * with `CodingErrorAction.REPORT` and Python's `bytes.decode("utf-8")` accept: no overlong forms,
 * no surrogates (U+D800 to U+DFFF), nothing above U+10FFFF, no truncated sequence.
 */
private[sparktfrecord] object Utf8 {

  def isValid(buf: Array[Byte], off: Int, len: Int): Boolean = {
    val end = off + len
    var i = off
    while (i < end) {
      val b = buf(i)
      if (b >= 0) i += 1
      else {
        val lead = b & 0xff
        // The length and the range of the second byte follow from the lead byte; the others
        // are 80..BF.
        var n = 4
        var lo = 0x80
        var hi = 0xbf
        if (lead >= 0xc2 && lead <= 0xdf) n = 2
        else if (lead == 0xe0) { n = 3; lo = 0xa0 }
        else if (lead == 0xed) { n = 3; hi = 0x9f }
        else if (lead >= 0xe1 && lead <= 0xef) n = 3
        else if (lead == 0xf0) lo = 0x90
        else if (lead == 0xf4) hi = 0x8f
        else if (lead < 0xf1 || lead > 0xf3) return false
        if (end - i < n) return false
        val second = buf(i + 1) & 0xff
        if (second < lo || second > hi) return false
        var k = 2
        while (k < n) {
          val c = buf(i + k) & 0xff
          if (c < 0x80 || c > 0xbf) return false
          k += 1
        }
        i += n
      }
    }
    true
  }
}
