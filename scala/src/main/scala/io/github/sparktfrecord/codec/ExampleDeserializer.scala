package io.github.sparktfrecord.codec

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._

import io.github.sparktfrecord.wire.{FeatureIndex, FeatureOrder, FeatureValueReader, ProtoWire}
import io.github.sparktfrecord.wire.WireCursor

/**
 * Decodes serialized `tf.train.Example` (or `SequenceExample`) messages straight into one reused
 * [[UnsafeRow]] holding the requested columns only: the one file that says when and why the
 * general path reads a record.
 *
 * Everything that depends on the schema is decided here, once: the row's writers
 * ([[RowBuilder]], one [[ColumnWriter]] per column), the feature-name lookup (on UTF-8 bytes, by
 * position, [[FeatureOrder]]) and the two readers that share them:
 *  - the fast path, [[UsualLayoutReader]], a reader per column chosen for its type and shape,
 *    which reads `Example` records laid out the usual way, as TensorFlow writes them, finding
 *    each map entry where the previous records had it when it can (the layout prediction);
 *  - the general path, [[AnyLayoutReader]], which reads any layout, SequenceExample records,
 *    decimals, vectors (dense, or sparse: [[SparseVectorReader]]), feature lists and lists of
 *    lists (ragged: [[RaggedListReader]]), encoded tensors ([[EncodedTensorReader]]), and
 *    raises every error.
 *
 * Each record is read whole by one of them. The fast path is tried first where it applies (an
 * Example schema, a platform that reads unaligned little-endian words, `fastPath` set: the
 * option `decoder` is not `interpreted`); when it gives up on a record, the general path reads
 * that record again from its start. A file whose records keep making it give up (more than a
 * quarter of at least [[ExampleDeserializer.MinTrialRecords]]) stops trying it, so that a file of
 * unusual records pays the double read only briefly.
 *
 * One deserializer reads the records of one file, `path`, which its errors name with the byte
 * offset each record is given with. The returned row is overwritten by the next call.
 *
 * `corruptColumn`, when not -1, is the ordinal of the column that [[corruptRow]] fills with a bad
 * record's raw bytes (mode PERMISSIVE); it is never read from a feature. `columns`, when given,
 * names each column in messages (the Spark paths of a nested schema's features). `separator`
 * (the option `pathSeparator`) joins a vector column's name to its sparse features' suffixes.
 */
private[sparktfrecord] final class ExampleDeserializer(
    schema: StructType,
    recordType: RecordType,
    path: String,
    corruptColumn: Int = -1,
    columns: Array[String] = null,
    fastPath: Boolean = true,
    separator: String = FeaturePaths.DefaultSeparator) extends RowDecoder {
  import ExampleDeserializer._

  private val row = new RowBuilder(schema, corruptColumn, columns)
  private val values = new FeatureValueReader(new WireCursor)
  /** The vector columns' sparse features, looked up after the columns' own names. */
  private val sparse = new SparseVectorReader(row, schema.fieldNames, separator, values, path)
  /** The columns by feature name (the corrupt-record column has none), learned by position. */
  /** The lists-of-lists columns' ragged features (Example), looked up after the vectors'. */
  /** The encoded tensor columns' features (Example), looked up after the ragged lists'. */
  private val tensors = new EncodedTensorReader(row, schema, separator, values, path,
    recordType == RecordType.SequenceExample)
  private val ragged = new RaggedListReader(row, schema.fieldNames, separator, values, path,
    recordType == RecordType.SequenceExample, tensors.isTensor)
  private val order = new FeatureOrder(new FeatureIndex(
    schema.fieldNames.zipWithIndex.map { case (n, i) =>
      if (i == corruptColumn || tensors.isTensor(i)) null else n
    } ++ sparse.names ++ ragged.names ++ tensors.names))
  private val general = new AnyLayoutReader(row, order, recordType == RecordType.SequenceExample,
    path, values, sparse, ragged, tensors)
  private val usual: UsualLayoutReader =
    if (fastPath && recordType == RecordType.Example && ProtoWire.WordReads) {
      new UsualLayoutReader(row, order)
    } else null

  /** Whether the fast path is tried on the next record; the records it was tried on and failed. */
  private var trying = usual != null
  private var tried = 0L
  private var gaveUp = 0L

  /** Whether this deserializer tries the fast path on its next record. */
  def triesFastPath: Boolean = trying

  /** Whether the fast path predicts the next record's entries from the previous records'. */
  def predictsLayout: Boolean = trying && usual.predicts

  def decode(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow = {
    if (trying) {
      row.begin(offset)
      val read = usual.read(buf, start, end)
      count(read)
      if (read) return row.end()
    }
    row.begin(offset)
    general.read(buf, start, end)
    row.end()
  }

  /**
   * The give-up rule: once more than a quarter of the records tried (at least
   * [[MinTrialRecords]] of them) gave up, the fast path is not tried again in this file.
   */
  private def count(read: Boolean): Unit = {
    tried += 1
    if (!read) gaveUp += 1
    if (tried >= MinTrialRecords && 4 * gaveUp > tried) trying = false
  }

  def corruptRow(buf: Array[Byte], start: Int, end: Int, offset: Long): UnsafeRow =
    row.corruptRow(buf, start, end)
}

private[sparktfrecord] object ExampleDeserializer {
  /** The fewest records the give-up rule judges the fast path on. */
  final val MinTrialRecords = 16
}
