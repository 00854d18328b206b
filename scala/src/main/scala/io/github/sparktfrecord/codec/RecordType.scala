package io.github.sparktfrecord.codec

/** The `recordType` option's values. */
private[sparktfrecord] sealed abstract class RecordType(val name: String) extends Serializable

private[sparktfrecord] object RecordType {
  case object Example extends RecordType("Example")
  case object SequenceExample extends RecordType("SequenceExample")
  case object ByteArray extends RecordType("ByteArray")

  val All: Seq[RecordType] = Seq(Example, SequenceExample, ByteArray)
}
