package io.github.sparktfrecord.wire

/**
 * The values of one `Feature` message, as [[ExampleWalker.readFeature]] found them: their kind
 * and the run of list messages that hold them. [[FeatureValueReader.count]] then counts the
 * values and [[FeatureValueReader.emit]] hands them over. One is reused per task, refilled per
 * Feature.
 */
private[sparktfrecord] final class FeatureRun {
  /** The winning `Feature.kind` (`ProtoWire.KindBytes`, ...); `KindNone` for an unset Feature. */
  var kind: Int = ProtoWire.KindNone
  /** From the first list message of `kind` since the last switch of kind, to the Feature's end. */
  var start: Int = 0
  var end: Int = 0
  /** How many list messages of `kind` the run holds, and the content of the last one. */
  var lists: Int = 0
  var lastListStart: Int = 0
  var lastListEnd: Int = 0

  /** After [[FeatureValueReader.count]]: the number of values; -1 until they are counted. */
  var count: Int = -1
  /**
   * After [[FeatureValueReader.count]]: whether the values lie in one `value` field (a packed
   * run, as TensorFlow writes, or a single value), which [[FeatureValueReader.emit]] then reads
   * directly; its encoding (`(kind << 3) | wire type`) and bytes.
   */
  var singleField: Boolean = false
  var fieldCase: Int = 0
  var fieldStart: Int = 0
  var fieldEnd: Int = 0
}
