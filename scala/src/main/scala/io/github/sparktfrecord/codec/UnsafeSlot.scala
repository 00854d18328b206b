package io.github.sparktfrecord.codec

/**
 * The slot of a variable-length value (a string, binary, struct or array) in an `UnsafeRow` or
 * `UnsafeArrayData`, read with `getLong` (Spark's `offsetAndSize`): the value's offset from the
 * container's base offset in the high 32 bits, its size in bytes in the low 32.
 */
private[sparktfrecord] object UnsafeSlot {
  /** Where the value starts in the container's base object, for a container at `baseOffset`. */
  def offset(baseOffset: Long, slot: Long): Long = baseOffset + (slot >>> 32)

  /** The value's size in bytes. */
  def size(slot: Long): Int = slot.toInt
}
