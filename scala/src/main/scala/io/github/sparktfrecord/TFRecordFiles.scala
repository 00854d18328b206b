package io.github.sparktfrecord

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import org.apache.spark.sql.types.{DataType, StructType}

/**
 * TFRecord files without a Spark job, for tools on the driver or outside Spark (the CLI's
 * `inspect`, the benchmarks' floor). Paths are Hadoop paths: local files or any file system
 * Hadoop is configured for.
 */
object TFRecordFiles {

  /**
   * Walks the framing of a file (decompressing by extension) and checks both CRCs of every
   * record, parsing nothing: the floor under any reader. Returns the number of records.
   */
  def countRecords(path: String): Long = {
    val options = new TFRecordOptions(toScala(java.util.Collections.emptyMap[String, String]()))
    val reader = openFile(path, options)
    reader.keepData = false
    try {
      var n = 0L
      while (reader.next()) n += 1
      n
    } finally reader.close()
  }

  /**
   * The data files under `path` (itself when it is a file), recursively, skipping names that
   * start with `_` or `.` as Spark does, sorted by path: each as "size<TAB>path".
   */
  def listFiles(path: String): Array[String] = {
    val root = new Path(path)
    val fs = root.getFileSystem(new Configuration())
    val found = Array.newBuilder[String]
    def visit(status: FileStatus): Unit = {
      val name = status.getPath.getName
      if (status.getPath != root && (name.startsWith("_") || name.startsWith("."))) return
      if (status.isDirectory) fs.listStatus(status.getPath).foreach(visit)
      else found += s"${status.getLen}\t${status.getPath}"
    }
    visit(fs.getFileStatus(root))
    found.result().sortBy(_.split('\t')(1))
  }

  /** The schema the data source would infer for these files, as `StructType` JSON. */
  def inferSchemaJson(paths: Array[String], options: java.util.Map[String, String]): String = {
    val conf = new Configuration()
    val statuses = paths.toSeq.map { p =>
      val path = new Path(p)
      path.getFileSystem(conf).getFileStatus(path)
    }
    TFRecordSchemaInferencer.infer(statuses, new TFRecordOptions(toScala(options)), conf).json
  }

  /**
   * The first `limit` records of the files, decoded with `schemaJson`, each as one JSON object.
   * Bytes (string and binary columns) are shown as text when they are valid UTF-8, else as
   * `0x…` hex; NaN and infinities as strings.
   */
  def readRecordsJson(
      paths: Array[String],
      schemaJson: String,
      options: java.util.Map[String, String],
      limit: Int): Array[String] = {
    val schema = DataType.fromJson(schemaJson).asInstanceOf[StructType]
    val parsed = new TFRecordOptions(toScala(options))
    val out = Array.newBuilder[String]
    var n = 0
    val it = paths.iterator
    while (n < limit && it.hasNext) {
      val path = it.next()
      val reader = openFile(path, parsed)
      try {
        val decode = TFRecordFileFormat.decoder(schema, parsed, path)
        while (n < limit && reader.next()) {
          val row = decode(reader)
          if (row != null) {
            out += JsonText.row(row, schema)
            n += 1
          }
        }
      } finally reader.close()
    }
    out.result()
  }

  private def openFile(file: String, options: TFRecordOptions): TFRecordReader = {
    val path = new Path(file)
    val conf = new Configuration()
    val length = path.getFileSystem(conf).getFileStatus(path).getLen
    TFRecordReader.open(path, conf, options, length)
  }

  /**
   * The options as given, over defaults for those that would otherwise come from the SQL
   * configuration: outside a Spark session that is not worth initialising.
   */
  private def toScala(options: java.util.Map[String, String]): Map[String, String] = {
    val b = Map.newBuilder[String, String]
    b ++= Seq(TFRecordOptions.IgnoreCorruptFilesOption -> "false",
      TFRecordOptions.IgnoreMissingFilesOption -> "false",
      TFRecordOptions.ColumnNameOfCorruptRecordOption -> "_corrupt_record")
    val it = options.entrySet().iterator()
    while (it.hasNext) {
      val e = it.next()
      b += e.getKey -> e.getValue
    }
    b.result()
  }
}

/** Rows as JSON text for people to read (not for machines: bytes become text or hex). */
private[sparktfrecord] object JsonText {
  import java.nio.ByteBuffer
  import java.nio.charset.{CharacterCodingException, CodingErrorAction, StandardCharsets}

  import org.apache.spark.sql.catalyst.InternalRow
  import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
  import org.apache.spark.sql.types._

  def row(r: InternalRow, schema: StructType): String = {
    val sb = new StringBuilder("{")
    schema.fields.zipWithIndex.foreach { case (f, i) =>
      if (i > 0) sb.append(", ")
      quote(sb, f.name)
      sb.append(": ")
      value(sb, r, i, f.dataType)
    }
    sb.append("}").toString
  }

  private def value(sb: StringBuilder, r: SpecializedGetters, i: Int, t: DataType): Unit =
    if (r.isNullAt(i)) sb.append("null")
    else t match {
      case BooleanType => sb.append(r.getBoolean(i))
      case ByteType => sb.append(r.getByte(i))
      case ShortType => sb.append(r.getShort(i))
      case IntegerType => sb.append(r.getInt(i))
      case DateType => quote(sb, java.time.LocalDate.ofEpochDay(r.getInt(i).toLong).toString)
      case LongType => sb.append(r.getLong(i))
      case TimestampType | TimestampNTZType =>
        val micros = r.getLong(i)
        quote(sb, java.time.Instant.EPOCH.plusNanos(Math.multiplyExact(micros, 1000L)).toString)
      case FloatType => number(sb, r.getFloat(i).toDouble, java.lang.Float.toString(r.getFloat(i)))
      case DoubleType => number(sb, r.getDouble(i), java.lang.Double.toString(r.getDouble(i)))
      case d: DecimalType =>
        sb.append(r.getDecimal(i, d.precision, d.scale).toJavaBigDecimal.toPlainString)
      case StringType => bytes(sb, r.getUTF8String(i).getBytes)
      case BinaryType => bytes(sb, r.getBinary(i))
      case ArrayType(e, _) =>
        val a = r.getArray(i)
        sb.append('[')
        var j = 0
        while (j < a.numElements()) {
          if (j > 0) sb.append(", ")
          value(sb, a, j, e)
          j += 1
        }
        sb.append(']')
      case u: UserDefinedType[_] => value(sb, r, i, u.sqlType)
      case s: StructType =>
        val struct = r.getStruct(i, s.length)
        sb.append(row(struct, s))
      case other => quote(sb, other.simpleString)
    }

  private def number(sb: StringBuilder, d: Double, text: String): Unit =
    if (d.isNaN || d.isInfinite) quote(sb, text) else sb.append(text)

  private def bytes(sb: StringBuilder, b: Array[Byte]): Unit = {
    val decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
    try quote(sb, decoder.decode(ByteBuffer.wrap(b)).toString) catch {
      case _: CharacterCodingException =>
        sb.append("\"0x")
        b.foreach(x => sb.append(f"${x & 0xff}%02x"))
        sb.append('"')
    }
  }

  private def quote(sb: StringBuilder, s: String): Unit = {
    sb.append('"')
    s.foreach {
      case '"' => sb.append("\\\"")
      case '\\' => sb.append("\\\\")
      case '\n' => sb.append("\\n")
      case '\r' => sb.append("\\r")
      case '\t' => sb.append("\\t")
      case c if c < ' ' => sb.append(f"\\u${c.toInt}%04x")
      case c => sb.append(c)
    }
    sb.append('"')
  }
}
