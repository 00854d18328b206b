package io.github.sparktfrecord.sql

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.FileStatus

import org.apache.spark.sql.types._

import io.github.sparktfrecord.{TFRecordDataException, TFRecordError, WireFormatException}
import io.github.sparktfrecord.codec
import io.github.sparktfrecord.codec.{RecordType, TFRecordSchema, TypeTable}
import io.github.sparktfrecord.framing.TFRecordReader
import io.github.sparktfrecord.wire.{ExampleWalker, FeatureNames, FeatureOrder, FeatureRun}
import io.github.sparktfrecord.wire.{FeatureValueReader, FeatureVisitor, ProtoWire, Utf8, ValueSink}
import io.github.sparktfrecord.wire.WireCursor

/**
 * Infers a schema from a sample of the records: up to `inferSchemaMaxFiles` files, spread evenly
 * over the files sorted by path, and up to `inferSchemaMaxRecords` records of each.
 *
 * Rules, per feature name:
 *  - kind: int64 → bigint, float → float, bytes → string, or binary when some
 *    sampled value of it is not well-formed UTF-8 ([[Utf8]]: JPEG, PNG, serialized tensors);
 *    int64 and float together → float; bytes with anything → string (binary by the same
 *    rule); a feature never seen with a kind (unset) → string.
 *  - shape: an array when some record holds more than one value, else a scalar (empty → null);
 *    a SequenceExample's feature lists are always `array<array<…>>`, after the context columns.
 *  - columns come in the order the features are first met, so the same files give the same schema.
 *  - `x/indices` (int64), `x/values` (float) and `x/size` (int64, one value), a vector written
 *    with `vectorLayout` `sparse`, are one column `x` of Spark ML's vector type when spark-mllib
 *    is on the class path (else three columns).
 *  - `x/ragged_flat_values` and `x/ragged_row_lengths_0` … `_{n-1}` (int64), a list of lists
 *    written ragged ([[codec.FeaturePaths.raggedNames]]), are one column `x` of n+1 nested
 *    arrays of the flat values' type. A set with a gap in its levels stays plain columns, with a
 *    warning that says why.
 */
private[sparktfrecord] object TFRecordSchemaInferencer {
  import ProtoWire._

  def infer(files: Seq[FileStatus], options: TFRecordOptions, conf: Configuration): StructType =
    options.recordType match {
      case RecordType.ByteArray =>
        StructType(Seq(StructField(TFRecordSchema.ByteArrayColumn, BinaryType, nullable = false)))
      case recordType =>
        inferExamples(files, options, conf, recordType == RecordType.SequenceExample)
    }

  private final class Stats(var kind: Int, var maxValues: Int) {
    /** Whether a bytes value was met that is not well-formed UTF-8. */
    var binary = false

    def merge(other: Stats): Unit = {
      kind = mergeKinds(kind, other.kind)
      maxValues = math.max(maxValues, other.maxValues)
      binary ||= other.binary
    }

    def dataType: DataType = TypeTable.inferred(kind, binary).dataType
  }

  /**
   * Feature names numbered in the order they are first met, with their statistics kept by number,
   * as a context feature (`stats`) and as a feature list (`listStats`), null until met as one.
   */
  private final class NumberedFeatures {
    val names = mutable.ArrayBuffer.empty[String]
    val stats = mutable.ArrayBuffer.empty[Stats]
    val listStats = mutable.ArrayBuffer.empty[Stats]
    private val numbers = mutable.HashMap.empty[String, Int]

    /** Whether `name` was met, as a context feature or a feature list. */
    def has(name: String): Boolean = numbers.contains(name)

    /** The number of `name`, the next one when it is met for the first time. */
    def number(name: String): Int = numbers.getOrElseUpdate(name, {
        names += name
        stats += null
        listStats += null
        names.size - 1
      })

    /** The statistics of feature `n` as a context feature, begun when first met as one. */
    def contextStats(n: Int): Stats = {
      if (stats(n) == null) stats(n) = new Stats(KindNone, 0)
      stats(n)
    }

    /** The statistics of feature `n` as a feature list, begun when first met as one. */
    def featureListStats(n: Int): Stats = {
      if (listStats(n) == null) listStats(n) = new Stats(KindNone, 0)
      listStats(n)
    }

    /** Adds what `other` knows, numbering the names it meets first after these. */
    def merge(other: NumberedFeatures): Unit = for (i <- other.names.indices) {
      val n = number(other.names(i))
      if (other.stats(i) != null) contextStats(n).merge(other.stats(i))
      if (other.listStats(i) != null) featureListStats(n).merge(other.listStats(i))
    }
  }

  /** What the records read from one file say of their features. */
  private final class FileSample(sequence: Boolean) {
    val features = new NumberedFeatures
    var records = 0L

    private val order = new FeatureOrder(new FeatureNames {
      def find(buf: Array[Byte], off: Int, len: Int): Int =
        features.number(new String(buf, off, len, UTF_8))
    })
    private val cursor = new WireCursor
    private val walker = new ExampleWalker(cursor)
    private val values = new FeatureValueReader(cursor)
    private val step = new FeatureRun

    /** Marks `current` binary at its first bytes value that is not well-formed UTF-8. */
    private var current: Stats = _
    private val utf8Check = new ValueSink {
      def int64(v: Long): Unit = ()
      def float(v: Float): Unit = ()
      def bytes(buf: Array[Byte], off: Int, len: Int): Unit =
        if (!current.binary && !Utf8.isValid(buf, off, len)) current.binary = true
    }

    private def checkBytes(s: Stats, run: FeatureRun): Unit =
      if (run.kind == KindBytes && !s.binary) {
        current = s
        values.emit(run, utf8Check)
      }

    private val visitor = new FeatureVisitor {
      def lookup(buf: Array[Byte], keyOff: Int, keyLen: Int): Int =
        order.next(buf, keyOff, keyLen)

      def feature(id: Int, run: FeatureRun): Unit = {
        val n = values.count(run)
        val s = features.contextStats(id)
        s.kind = mergeKinds(s.kind, run.kind)
        s.maxValues = math.max(s.maxValues, n)
        checkBytes(s, run)
      }

      def featureList(id: Int, start: Int, end: Int): Unit = {
        val s = features.featureListStats(id)
        var from = walker.nextStep(start, end, step)
        while (from >= 0) {
          s.kind = mergeKinds(s.kind, step.kind)
          if (step.kind == KindBytes && !s.binary) {
            values.count(step)
            checkBytes(s, step)
          }
          from = walker.nextStep(from, end, step)
        }
      }
    }

    /** Reads the file's sample, or less: until `enough` says so after a record. */
    def read(
        file: FileStatus,
        options: TFRecordOptions,
        conf: Configuration,
        enough: NumberedFeatures => Boolean = _ => false): this.type = {
      var reader: TFRecordReader = null
      try {
        reader = TFRecordReader.open(file.getPath, conf, options.framing(keepData = true),
          file.getLen)
        var n = 0
        while (n < options.inferSchemaMaxRecords && reader.next()) {
          try {
            order.startRecord()
            if (sequence) {
              walker.walkSequenceExample(reader.data, reader.dataStart, reader.dataEnd, visitor)
            } else walker.walkExample(reader.data, reader.dataStart, reader.dataEnd, visitor)
          } catch {
            case e: WireFormatException =>
              throw TFRecordDataException.malformed(e, sequence, file.getPath.toString,
                reader.offset, reader.dataStart)
          }
          n += 1
          records += 1
          if (enough(features)) n = Int.MaxValue
        }
      } catch {
        // As Spark's scans do: keep what was read before the bad record, go on with the next file.
        case e: java.io.FileNotFoundException if options.ignoreMissingFiles =>
          logSkipped(file, e)
        case e @ (_: java.io.IOException | _: RuntimeException) if options.ignoreCorruptFiles =>
          logSkipped(file, e)
      } finally {
        if (reader != null) reader.close()
      }
      this
    }
  }

  private def inferExamples(
      files: Seq[FileStatus],
      options: TFRecordOptions,
      conf: Configuration,
      sequence: Boolean): StructType = {
    val sample = sampleFiles(files, options.inferSchemaMaxFiles)
    val samples = readInParallel(sample, options, conf, sequence)
    // Merged in the files' order, so that columns come in the order their features are first
    // met, however the reads were scheduled.
    val all = new NumberedFeatures
    samples.foreach(fs => all.merge(fs.features))
    val names = all.names
    val stats = all.stats
    val listStats = all.listStats
    val records = samples.map(_.records).sum
    names.indices.find(i => stats(i) != null && listStats(i) != null).foreach { i =>
      throw TFRecordError.argument(TFRecordError.CannotInferSchema,
        s"Cannot infer a TFRecord schema: '${names(i)}' is both a context feature and a feature " +
          "list. Give the schema with .schema(...): array<array<…>> reads the feature list, " +
          "any other type the context feature.")
    }
    if (names.isEmpty) {
      val what = if (files.isEmpty) "there are no files"
      else {
        s"the $records records read from ${sample.size} of ${files.size} files have no features"
      }
      throw TFRecordError.argument(TFRecordError.CannotInferSchema,
        s"Cannot infer a TFRecord schema: $what. Give the schema with .schema(...), or point " +
          "the reader at files that hold tf.train.Example records.")
    }
    val (vectors, vectorParts) = sparseVectors(names, stats, options.pathSeparator)
    val (lists, listParts) = raggedLists(names, stats, options.pathSeparator)
    val context = names.indices.filter(stats(_) != null).flatMap { i =>
      val s = stats(i)
      val dataType =
        if (s.maxValues > 1) ArrayType(s.dataType, containsNull = false) else s.dataType
      vectors.get(i).orElse(lists.get(i)) match {
        case Some(column) => Some(column)
        // A part of a vector or list of lists, given at its first part.
        case None if vectorParts(i) || listParts(i) => None
        case None => Some(StructField(names(i), dataType, nullable = true))
      }
    }
    val featureLists = names.indices.filter(listStats(_) != null).map { i =>
      val step = ArrayType(listStats(i).dataType, containsNull = false)
      val steps = ArrayType(step, containsNull = false)
      StructField(names(i), steps, nullable = true)
    }
    val flat = (context ++ featureLists).toSeq
    if (options.inferNesting) nest(flat, options.pathSeparator) else StructType(flat)
  }

  /**
   * The vectors written with `vectorLayout` `sparse`: features `x/indices` (int64), `x/values`
   * (float) and `x/size` (int64, one value) are one column `x` of Spark ML's vector type, when
   * spark-mllib is on the class path and no feature is named `x` itself. Returns each vector
   * column by the number of its first part (the column goes there), and the numbers of every
   * part (whose features are left out).
   */
  private def sparseVectors(
      names: collection.Seq[String],
      stats: collection.Seq[Stats],
      separator: String): (Map[Int, StructField], Set[Int]) = TypeTable.vectorType match {
    case None => (Map.empty, Set.empty)
    case Some(vector) =>
      val numbers = names.indices.filter(stats(_) != null).map(i => names(i) -> i).toMap
      def kindOf(i: Int) = stats(i).kind
      val suffix = separator + "size"
      val found = names.indices.filter(i => stats(i) != null && names(i).endsWith(suffix))
        .flatMap { sizeAt =>
          val x = names(sizeAt).dropRight(suffix.length)
          codec.FeaturePaths.sparseVectorNames(x, separator).map(numbers.get) match {
            case Seq(Some(ix), Some(vx), Some(sx))
              if x.nonEmpty && !numbers.contains(x) &&
                kindOf(sx) == KindInt64 && stats(sx).maxValues <= 1 &&
                (kindOf(ix) == KindInt64 || kindOf(ix) == KindNone) &&
                (kindOf(vx) == KindFloat || kindOf(vx) == KindNone) =>
              Some(Seq(ix, vx, sx) -> StructField(x, vector, nullable = true))
            case _ => None
          }
        }
      (found.map { case (parts, column) => parts.min -> column }.toMap,
        found.flatMap(_._1).toSet)
  }

  /**
   * The lists of lists written ragged: `x/ragged_flat_values` with `x/ragged_row_lengths_0` to
   * `_{n-1}` (int64, or never set) are one column `x` of n+1 nested arrays of the flat values'
   * type, when no feature is named `x` itself. A set whose levels have a gap (`_0` and `_2`
   * without `_1`), or no `_0`, stays plain columns, and a warning says why. Returns each column
   * by the number of its first part (the column goes there), and the numbers of every part.
   */
  private def raggedLists(
      names: collection.Seq[String],
      stats: collection.Seq[Stats],
      separator: String): (Map[Int, StructField], Set[Int]) = {
    import codec.FeaturePaths.{RaggedFlatValues, RaggedRowLengths}
    val numbers = names.indices.filter(stats(_) != null).map(i => names(i) -> i).toMap
    val suffix = separator + RaggedFlatValues
    val found = names.indices.filter(i => stats(i) != null && names(i).endsWith(suffix))
      .flatMap { flatAt =>
        val x = names(flatAt).dropRight(suffix.length)
        val prefix = x + separator + RaggedRowLengths
        val levels = numbers.keys.filter(_.startsWith(prefix)).map(_.drop(prefix.length))
          .filter(k => k.nonEmpty && k.forall(Character.isDigit) && (k == "0" || k(0) != '0'))
          .map(_.toInt).toSeq.sorted
        val lengths = levels.map(k => numbers(prefix + k))
        val int64 = lengths.forall(i => stats(i).kind == KindInt64 || stats(i).kind == KindNone)
        if (x.isEmpty || numbers.contains(x) || !int64) None
        else if (levels.isEmpty || levels != levels.indices) {
          raggedWarning(s"Features '${names(flatAt)}'" +
            levels.map(k => s", '$prefix$k'").mkString + " are not read as one list of lists " +
            s"'$x': its row lengths must be '${prefix}0' to '${prefix}<n-1>', without a gap, " +
            s"but ${if (levels.isEmpty) s"there is no '${prefix}0'"
              else s"'$prefix${levels.indices.find(k => levels(k) != k).get}' is missing"}. " +
            "They are read as separate columns.")
          None
        } else {
          val dataType = (0 to levels.length).foldLeft(stats(flatAt).dataType)((t, _) =>
            ArrayType(t, containsNull = false))
          Some((flatAt +: lengths) -> StructField(x, dataType, nullable = true))
        }
      }
    (found.map { case (parts, column) => parts.min -> column }.toMap, found.flatMap(_._1).toSet)
  }

  private def raggedWarning(message: String): Unit =
    org.slf4j.LoggerFactory.getLogger("io.github.sparktfrecord.TFRecordFileFormat").warn(message)

  /**
   * Which of the features `wanted` some record of the sample that inference reads from `files`
   * holds (as a context feature or a feature list), so that a column inference gave is always
   * held. `first`, one of the files, is read first, up to the first record after which every
   * wanted feature was met: most often that is all it takes. Only when some are still not met
   * are `files` listed and their sample read whole.
   */
  def heldFeatures(
      first: FileStatus,
      files: => Seq[FileStatus],
      options: TFRecordOptions,
      conf: Configuration,
      wanted: Set[String]): Set[String] = {
    val sequence = options.recordType == RecordType.SequenceExample
    var met = 0
    val firstSample = new FileSample(sequence).read(first, options, conf,
      features =>
        // Looked up again only when a feature was met for the first time.
        features.names.size != met && { met = features.names.size; wanted.forall(features.has) })
    if (wanted.forall(firstSample.features.has)) return wanted
    val samples = readInParallel(sampleFiles(files, options.inferSchemaMaxFiles), options, conf,
      sequence)
    wanted.filter(name => firstSample.features.has(name) || samples.exists(_.features.has(name)))
  }

  /**
   * Option `inferNesting`: path-like names become struct columns, `image/object/bbox/xmin` the
   * field `xmin` of `bbox` of `object` of the column `image`. A struct comes where its first
   * feature came, its fields in the order of theirs. A name with an empty part (`a//b`, `/a`)
   * stays one column. A name that is both a feature and the path of others (`a` and `a/b`) fails.
   */
  private def nest(fields: Seq[StructField], separator: String): StructType = {
    final class Node {
      /** Each child: a feature's field, or a node of features under a common path. */
      val children = mutable.LinkedHashMap.empty[String, Either[StructField, Node]]
      /** The first feature under this node, for messages. */
      var first: String = _
      def struct: StructType = StructType(children.toSeq.map {
        case (_, Left(f)) => f
        case (name, Right(n)) => StructField(name, n.struct, nullable = true)
      })
    }
    def conflict(leaf: String, other: String): Nothing =
      throw TFRecordError.argument(TFRecordError.CannotInferSchema,
        s"Cannot infer nesting: '$leaf' is a feature and also the path of the feature " +
          s"'$other'. Read without inferNesting, or give the schema with .schema(...).")
    val root = new Node
    val quoted = java.util.regex.Pattern.quote(separator)
    fields.foreach { f =>
      val parts = f.name.split(quoted, -1)
      val path = if (parts.exists(_.isEmpty)) Array(f.name) else parts
      var node = root
      path.init.zipWithIndex.foreach { case (part, d) =>
        node = node.children.get(part) match {
          case Some(Right(n)) => n
          case Some(Left(_)) => conflict(path.take(d + 1).mkString(separator), f.name)
          case None =>
            val n = new Node
            n.first = f.name
            node.children(part) = Right(n)
            n
        }
      }
      node.children.get(path.last) match {
        case Some(Right(n)) => conflict(f.name, n.first)
        case Some(Left(_)) => throw new IllegalStateException("feature met twice: " + f.name)
        case None => node.children(path.last) = Left(f.copy(name = path.last))
      }
    }
    root.struct
  }

  /**
   * Reads the sampled files on up to as many threads as the driver has cores (at most 8): on an
   * object store most of the time is waiting. The first failure, in the files' order, is thrown.
   */
  private def readInParallel(
      sample: Seq[FileStatus],
      options: TFRecordOptions,
      conf: Configuration,
      sequence: Boolean): Seq[FileSample] = {
    val threads = math.min(sample.size, math.min(8, Runtime.getRuntime.availableProcessors))
    if (threads <= 1) return sample.map(new FileSample(sequence).read(_, options, conf))
    val pool = java.util.concurrent.Executors.newFixedThreadPool(threads,
      (r: Runnable) => {
        val t = new Thread(r, "tfrecord-schema-inference")
        t.setDaemon(true)
        t
      })
    try {
      val futures = sample.map { file =>
        pool.submit(new java.util.concurrent.Callable[FileSample] {
          def call(): FileSample = new FileSample(sequence).read(file, options, conf)
        })
      }
      futures.map { f =>
        try f.get()
        catch {
          case e: java.util.concurrent.ExecutionException => throw e.getCause
        }
      }
    } finally {
      pool.shutdownNow()
    }
  }

  private def logSkipped(file: FileStatus, e: Throwable): Unit =
    org.slf4j.LoggerFactory.getLogger(getClass).warn(
      s"Schema inference skipped the rest of ${file.getPath}: ${e.getMessage}")

  /** int64 + float → float; bytes + anything → bytes; unset takes the other. */
  def mergeKinds(a: Int, b: Int): Int =
    if (a == KindNone) b
    else if (b == KindNone || a == b) a
    else if (a == KindBytes || b == KindBytes) KindBytes
    else KindFloat

  /** Up to `max` files, evenly spread over all of them sorted by path. */
  def sampleFiles(files: Seq[FileStatus], max: Int): Seq[FileStatus] = {
    val sorted = files.sortBy(_.getPath.toString).toIndexedSeq
    if (sorted.size <= max) sorted
    else (0 until max).map(i => sorted((i.toLong * sorted.size / max).toInt))
  }
}
