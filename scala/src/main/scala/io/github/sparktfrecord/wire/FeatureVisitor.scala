package io.github.sparktfrecord.wire

/** Receives the features of an Example or SequenceExample as [[ExampleWalker]] parses them. */
private[sparktfrecord] abstract class FeatureVisitor {
  /**
   * Whether the feature (or feature list) with key `buf[keyOff, keyOff + keyLen)` is wanted:
   * a number >= 0 that is handed back to [[feature]] / [[featureList]], or -1 to skip it
   * without looking inside.
   */
  def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int

  /**
   * One wanted feature (of an Example, or of a SequenceExample's context): `id` is what
   * [[lookup]] returned, `run` where its values lie (count them and hand them over with
   * [[FeatureValueReader]]). The run is reused: it is only valid during this call.
   */
  def feature(id: Int, run: FeatureRun): Unit

  /**
   * One wanted feature list of a SequenceExample: its `FeatureList` message is `[start, end)`,
   * steps read with [[ExampleWalker.nextStep]].
   */
  def featureList(id: Int, start: Int, end: Int): Unit
}
