package io.github.sparktfrecord.codec

import java.util.concurrent.ConcurrentHashMap

import org.slf4j.LoggerFactory

import org.apache.spark.sql.catalyst.expressions.codegen.{CodeAndComment, CodeGenerator}
import org.apache.spark.sql.catalyst.expressions.codegen.GeneratedClass
import org.apache.spark.sql.types._

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Builds the decoder of a flat `Example` schema: Java source made from the columns' types (see
 * [[GeneratedExampleDecoder]]), compiled once per schema per JVM with Spark's own Janino
 * machinery ([[CodeGenerator]]), as Spark compiles its projections. When it does not compile
 * (class loader, Janino's limits), one warning is logged and the interpreter
 * ([[TFRecordDeserializer]]) reads the schema: the query never fails for it.
 *
 * Every column of a type or shape the generated code does not read itself (decimal, vector,
 * `array<array<...>>`) is handed over to the interpreter's decoder for that column, feature by
 * feature. SequenceExample records are read by the interpreter.
 */
private[sparktfrecord] object ExampleDecoderGenerator {
  import FeatureDecoder._

  private val log = LoggerFactory.getLogger(getClass)

  /** Compiled classes by the columns' [[helper]] names; Left: why it did not compile. */
  private val compiled = new ConcurrentHashMap[String, Either[Throwable, GeneratedClass]]()

  /** The columns in one generated method: its `switch` stays well below the JIT's limits. */
  final val ColumnsPerMethod = 64

  /**
   * The decoder of the records of `path` into `schema` (see [[TFRecordDeserializer]] for the
   * other arguments): generated when `generated` is set and the schema is a flat Example's.
   * With `required` (the option `decoder` = `generated` given), an Example schema that cannot
   * have its generated decoder fails instead of falling back to the interpreter.
   */
  def decoder(
      schema: StructType,
      recordType: RecordType,
      path: String,
      corruptColumn: Int,
      columns: Array[String],
      generated: Boolean,
      required: Boolean = false): RowDecoder = {
    val interpreter = new TFRecordDeserializer(schema, recordType, path, corruptColumn, columns)
    if (generated && recordType == RecordType.Example) {
      if (ProtoWire.WordReads) generate(interpreter, path, required)
      else if (required) notGenerated("this platform's JVM reads no unaligned words")
      else interpreter
    } else interpreter
  }

  /** The generated decoder over `interpreter`, or the interpreter when it does not compile. */
  def generate(
      interpreter: TFRecordDeserializer,
      path: String,
      required: Boolean = false): RowDecoder = {
    val helpers = interpreter.decoders.map(helper)
    val key = helpers.mkString(",")
    if (compiled.size > 1000) compiled.clear() // a bound, for a JVM that reads very many schemas
    compiled.computeIfAbsent(key, _ => compile(source(helpers))) match {
      case Right(c) => c.generate(Array(interpreter, path)).asInstanceOf[RowDecoder]
      case Left(e) if required => notGenerated(s"its generated code did not compile ($e)")
      case Left(_) => interpreter
    }
  }

  private def notGenerated(why: String): Nothing = {
    // The `decoder` option's name and values, as TFRecordOptions declares them (the layer above).
    val (o, generated, interpreted) = ("decoder", "generated", "interpreted")
    throw TFRecordError.argument(TFRecordError.InvalidOption,
      s"Option $o=$generated cannot read this schema: $why. Leave " +
        s"the option out to fall back to the interpreted decoder, or set " +
        s"$o=$interpreted", "option" -> o, "value" -> generated)
  }

  private def compile(source: String): Either[Throwable, GeneratedClass] =
    try Right(CodeGenerator.compile(new CodeAndComment(source, Map.empty[String, String]))._1)
    catch {
      case e @ (_: Exception | _: LinkageError) =>
        log.warn("The TFRecord decoder generated for a schema did not compile; records of " +
            "that schema are read by the interpreted decoder", e)
        Left(e)
    }

  /**
   * The helper of [[GeneratedExampleDecoder]] that reads column `d`'s usual feature, e.g.
   * `arrayFloat`; null when the interpreter reads the column.
   */
  def helper(d: FeatureDecoder): String = {
    val element = d.elementType match {
      case LongType | TimestampType | TimestampNTZType => "Long"
      case IntegerType | DateType => "Int"
      case ShortType => "Short"
      case ByteType => "Byte"
      case BooleanType => "Boolean"
      case FloatType => "Float"
      case DoubleType => "Double"
      case StringType | BinaryType => "Bytes"
      case _ => null
    }
    if (element == null) null
    else if (d.shape == ShapeScalar) "scalar" + element
    else if (d.shape == ShapeArray) "array" + element
    else null
  }

  /** The Java source of the decoder whose column `i` is read by `helpers(i)`. */
  def source(helpers: Array[String]): String = {
    val n = helpers.length
    val arrays = helpers.indices.filter(i => helpers(i) != null && helpers(i).startsWith("array"))
    val groups = (n + ColumnsPerMethod - 1) / ColumnsPerMethod
    val code = new StringBuilder
    // Spark caches compiled classes by their source: classes of ours loaded by another class
    // loader (a jar added to another session) get a class of their own.
    code ++= s"""/* spark-tfrecord decoder, classes of loader ${
        System.identityHashCode(getClass.getClassLoader)
      } */
public java.lang.Object generate(Object[] references) {
  return new SpecificExampleDecoder(references);
}

final class SpecificExampleDecoder extends io.github.sparktfrecord.codec.GeneratedExampleDecoder {
  private final int[] seen;
${arrays.map(i => s"  private final $ArrayWriter aw$i;").mkString("\n")}

  public SpecificExampleDecoder(Object[] references) {
    super((io.github.sparktfrecord.codec.TFRecordDeserializer) references[0],
      (String) references[1]);
    seen = interpreter().seen();
${arrays.map(i => s"    aw$i = arrayWriter($i);").mkString("\n")}
  }

  protected boolean decodeRecord(byte[] buf, int start, int end, long offset) {
    final int stamp = begin(offset);
    // A name of up to 8 bytes is compared as one word where 8 bytes can be read.
    final int wordLimit = buf.length - 8;
    int position = 0;
    int p = start;
    while (p < end) {
      // Example.features, a field of its own, as every writer writes it; else the interpreter.
      if (buf[p] != 10) return false;
      final long features = delimited(buf, p + 1, end);
      if (features < 0L) return false;
      int q = (int) (features >>> 32);
      final int mapEnd = (int) features;
      while (q < mapEnd) {
        // A map entry laid out as writers lay it out: 0A len 0A keyLen key 12 len Feature.
        int valueStart = -1;
        int entryEnd = 0;
        int keyStart = 0;
        int keyLength = 0;
        if (buf[q] == 10) {
          final long entry = delimited(buf, q + 1, mapEnd);
          if (entry >= 0L) {
            final int entryStart = (int) (entry >>> 32);
            entryEnd = (int) entry;
            if (entryEnd - entryStart >= 4 && buf[entryStart] == 10) {
              keyLength = buf[entryStart + 1];
              keyStart = entryStart + 2;
              final int keyEnd = keyStart + keyLength;
              if (keyLength >= 0 && entryEnd - keyEnd >= 2 && buf[keyEnd] == 18) {
                final long value = delimited(buf, keyEnd + 1, entryEnd);
                if (value >= 0L && (int) value == entryEnd) valueStart = (int) (value >>> 32);
              }
            }
          }
        }
        if (valueStart < 0) {
          // Any other layout, or another field: the general walker reads it.
          q = otherField(buf, q, mapEnd);
          continue;
        }
        // The name met at this position in the previous record, else a lookup (and learn it).
        final int[] lengths = lengths();
        int id;
        if (position < lengths.length && lengths[position] == keyLength && keyStart <= wordLimit
            && ((org.apache.spark.unsafe.Platform.getLong(buf,
                org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET + keyStart)
              ^ words()[position]) & masks()[position]) == 0L) {
          id = ids()[position];
        } else {
          id = learn(position, buf, keyStart, keyLength);
        }
        position++;
        if (id >= 0) feature(id, buf, valueStart, entryEnd, offset, stamp);
        q = entryEnd;
      }
      p = mapEnd;
    }
    return true;
  }

  /** The Feature buf[start, end) of column id. */
  private void feature(int id, byte[] buf, int start, int end, long offset, int stamp) {
    // A repeated key: its last entry wins, even over an earlier entry's null.
    if (seen[id] == stamp) interpreter().clearNull(id);
    else seen[id] = stamp;
    switch (id / $ColumnsPerMethod) {
${(0 until groups).map(g =>
        s"      case $g: columns$g(id, buf, start, end, offset); break;").mkString("\n")}
    }
  }
"""
    for (g <- 0 until groups) {
      code ++= s"""
  private void columns$g(int id, byte[] buf, int start, int end, long offset) {
    switch (id) {
"""
      for (i <- g * ColumnsPerMethod until math.min(n, (g + 1) * ColumnsPerMethod)) {
        val h = helpers(i)
        code ++= s"      case $i:\n"
        if (h == null) {
          code ++= s"        fallback($i, buf, start, end, offset);\n"
        } else {
          val writer = if (h.startsWith("array")) s"aw$i, " else ""
          code ++= s"        if (!$h(${writer}$i, buf, start, end)) " +
            s"fallback($i, buf, start, end, offset);\n"
        }
        code ++= "        break;\n"
      }
      code ++= "    }\n  }\n"
    }
    code ++= "}\n"
    code.toString
  }

  private final val ArrayWriter =
    "org.apache.spark.sql.catalyst.expressions.codegen.UnsafeArrayWriter"
}
