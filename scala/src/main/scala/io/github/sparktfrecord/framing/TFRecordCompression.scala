package io.github.sparktfrecord.framing

import java.io.{InputStream, OutputStream}
import java.util.Locale
import java.util.zip.{Deflater, DeflaterOutputStream, GZIPInputStream, GZIPOutputStream}
import java.util.zip.{Inflater, InflaterInputStream}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.io.compress.{CompressionCodec, CompressionCodecFactory}
import org.apache.hadoop.util.ReflectionUtils

import io.github.sparktfrecord.TFRecordError
import io.github.sparktfrecord.wire.ProtoWire

/**
 * Whole-file compression, as TensorFlow's `TFRecordWriter(..., options="GZIP" / "ZLIB")` and
 * `TFRecordDataset(..., compression_type=...)` do it. GZIP and ZLIB use the JDK's own streams;
 * other Hadoop codecs are possible on request, but TensorFlow cannot read what they write.
 */
private[sparktfrecord] sealed abstract class TFRecordCompression(val name: String)
  extends Serializable {
  /** Appended to `.tfrecord`. */
  def extension: String
  def compress(out: OutputStream, conf: Configuration): OutputStream
  def decompress(in: InputStream, conf: Configuration): InputStream
}

private[sparktfrecord] object TFRecordCompression {
  private final val BufferBytes = 1 << 16

  case object None extends TFRecordCompression("none") {
    def extension: String = ""
    def compress(out: OutputStream, conf: Configuration): OutputStream = out
    def decompress(in: InputStream, conf: Configuration): InputStream = in
  }

  /** TensorFlow's "GZIP". */
  case object Gzip extends TFRecordCompression("gzip") {
    def extension: String = ".gz"
    def compress(out: OutputStream, conf: Configuration): OutputStream =
      new GZIPOutputStream(out, BufferBytes)
    def decompress(in: InputStream, conf: Configuration): InputStream =
      new GZIPInputStream(in, BufferBytes)
  }

  /** TensorFlow's "ZLIB": a deflate stream in the zlib wrapper (what Hadoop calls `.deflate`). */
  case object Deflate extends TFRecordCompression("deflate") {
    def extension: String = ".deflate"
    def compress(out: OutputStream, conf: Configuration): OutputStream =
      new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION), BufferBytes) {
        override def close(): Unit = try super.close()
        finally `def`.end()
      }
    def decompress(in: InputStream, conf: Configuration): InputStream =
      new InflaterInputStream(in, new Inflater(), BufferBytes) {
        override def close(): Unit = try super.close()
        finally inf.end()
      }
  }

  /** Any other Hadoop codec, by class name: only when asked for with `allowNonTensorFlowCodec`. */
  final case class Hadoop(codecClass: String) extends TFRecordCompression(codecClass) {
    private def codec(conf: Configuration): CompressionCodec =
      ReflectionUtils.newInstance(Class.forName(codecClass), conf).asInstanceOf[CompressionCodec]
    def extension: String = codec(new Configuration(false)).getDefaultExtension
    def compress(out: OutputStream, conf: Configuration): OutputStream =
      codec(conf).createOutputStream(out)
    /** Through a buffer: a codec may read its input a few bytes at a time (block headers). */
    def decompress(in: InputStream, conf: Configuration): InputStream =
      codec(conf).createInputStream(new java.io.BufferedInputStream(in, BufferBytes))
  }

  /** The values of the `compression` option TensorFlow can read, with their aliases. */
  val TensorFlowNames: Seq[String] = Seq("none", "gzip", "deflate", "zlib")

  private val HadoopShortNames = Map(
    "snappy" -> "org.apache.hadoop.io.compress.SnappyCodec",
    "bzip2" -> "org.apache.hadoop.io.compress.BZip2Codec",
    "lz4" -> "org.apache.hadoop.io.compress.Lz4Codec",
    "zstd" -> "org.apache.hadoop.io.compress.ZStandardCodec")

  /**
   * The `compression` option (or linkedin's `codec`, a Hadoop codec class name). A codec that
   * TensorFlow cannot read is refused unless `allowOthers`.
   */
  def parse(option: String, value: String, allowOthers: Boolean): TFRecordCompression = {
    val v = value.trim
    val lower = v.toLowerCase(Locale.ROOT)
    val simpleName = lower.substring(lower.lastIndexOf('.') + 1)
    lower match {
      case "none" | "uncompressed" | "" => None
      case "gzip" | "gz" | "org.apache.hadoop.io.compress.gzipcodec" => Gzip
      case "deflate" | "zlib" | "org.apache.hadoop.io.compress.deflatecodec" |
        "org.apache.hadoop.io.compress.defaultcodec" => Deflate
      case _ =>
        val className = HadoopShortNames.getOrElse(lower, v)
        val known = HadoopShortNames.contains(lower) || simpleName.endsWith("codec")
        if (!known) {
          val others = HadoopShortNames.keys.toSeq.sorted :+ "a Hadoop CompressionCodec class name"
          throw TFRecordError.invalidOption(option, value,
            TensorFlowNames ++ others.map(_ + " (with allowNonTensorFlowCodec)"))
        }
        if (!allowOthers) {
          throw TFRecordError.argument(TFRecordError.InvalidOption,
            s"TFRecord option '$option' is '$value', a codec TensorFlow cannot read " +
              "(TFRecordDataset reads only GZIP and ZLIB). Use compression gzip or deflate, or " +
              "set allowNonTensorFlowCodec=true if the files are only for Spark.")
        }
        // A class that is not there fails here, on the driver, not in the first task.
        val loadable = try {
          classOf[CompressionCodec].isAssignableFrom(Class.forName(className))
        } catch {
          case _: ClassNotFoundException | _: LinkageError => false
        }
        if (!loadable) {
          throw TFRecordError.invalidOption(option, value,
            TensorFlowNames :+ "a Hadoop CompressionCodec class on the class path")
        }
        Hadoop(className)
    }
  }

  /**
   * The codec of a file being read, as its name and the options say: its extension decides
   * (`.gz`, `.deflate`/`.zlib`, or one a Hadoop codec claims), else the `compression` option.
   * None here means that nothing said: the file's first bytes then decide ([[detect]]).
   */
  def forFile(path: Path, option: TFRecordCompression, conf: Configuration): TFRecordCompression = {
    val name = path.getName.toLowerCase(Locale.ROOT)
    if (name.endsWith(".gz")) Gzip
    else if (name.endsWith(".deflate") || name.endsWith(".zlib")) Deflate
    else if (option != None) option
    else if (name.endsWith(".tfrecord") || name.endsWith(".tfrecords")) None
    else {
      val codec = new CompressionCodecFactory(conf).getCodec(path)
      if (codec == null) None else Hadoop(codec.getClass.getName)
    }
  }

  /** How many of a file's first bytes [[detect]] looks at: one TFRecord header. */
  final val HeadBytes = TFRecordFraming.HeaderBytes

  /**
   * The codec of a file whose name and options say nothing (TensorFlow's own `-of-` shards
   * written with `compression_type="GZIP"` have no `.gz`), from its first `n` bytes `head`:
   *  - none when they are a sound TFRecord header (8 length bytes and their masked CRC32C), so
   *    that an uncompressed file is never taken for a compressed one, whatever its first
   *    record's length (a length whose first bytes are gzip's magic, or `0x78` as zlib's);
   *  - else GZIP when they start with gzip's magic and method (`1f 8b 08`);
   *  - else ZLIB when they start with a zlib header: deflate with a window of at most 32 KiB
   *    (`78`, ...) and a check value that 31 divides;
   *  - else none: the reader then reports the header as corrupt ([[likely]] says what it looks
   *    like).
   * An empty file is none.
   */
  def detect(head: Array[Byte], n: Int): TFRecordCompression =
    if (isTFRecordHeader(head, n)) None
    else if (isGzip(head, n)) Gzip
    else if (isZlib(head, n)) Deflate
    else None

  /** Whether `head` starts as a stream of `codec` does (GZIP, ZLIB; others are not checked). */
  def startsAs(codec: TFRecordCompression, head: Array[Byte], n: Int): Boolean = codec match {
    case Gzip => isGzip(head, n)
    case Deflate => isZlib(head, n)
    case _ => true
  }

  private def isTFRecordHeader(head: Array[Byte], n: Int): Boolean =
    n >= TFRecordFraming.HeaderBytes &&
      TFRecordFraming.maskedCrc(new java.util.zip.CRC32C, head, 0, 8) ==
      ProtoWire.readFixed32(head, 8)

  private def isGzip(head: Array[Byte], n: Int): Boolean =
    n >= 3 && head(0) == 0x1f.toByte && head(1) == 0x8b.toByte && head(2) == 8

  private def isZlib(head: Array[Byte], n: Int): Boolean =
    n >= 2 && head(0) == 0x78.toByte && ((head(0) & 0xff) * 256 + (head(1) & 0xff)) % 31 == 0

  private def startsWith(head: Array[Byte], n: Int, magic: Int*): Boolean =
    n >= magic.length && magic.indices.forall(i => head(i) == magic(i).toByte)

  /**
   * What the first `n` bytes of a file that did not read as `codec` look like, and the option
   * to set, or "" when they look like nothing known; for the errors at offset 0 of a file (a
   * corrupt header, a stream the codec could not decompress). `byName`: the file's extension
   * chose `codec`, which no option overrides.
   */
  def likely(head: Array[Byte], n: Int, codec: TFRecordCompression, byName: Boolean): String = {
    val detected = "or leave it unset: GZIP and ZLIB are detected by their first bytes"
    val (what, setting) =
      if (codec != None && isTFRecordHeader(head, n)) {
        ("an uncompressed TFRecord header", "compression=none (or leave it unset)")
      } else if (codec != Gzip && isGzip(head, n)) ("gzip's", s"compression=gzip ($detected)")
      else if (codec != Deflate && isZlib(head, n)) {
        ("a zlib header (TensorFlow's ZLIB)", s"compression=zlib ($detected)")
      } else if (startsWith(head, n, 'B', 'Z', 'h')) {
        ("bzip2's", "compression=bzip2 with allowNonTensorFlowCodec=true")
      } else if (startsWith(head, n, 0x28, 0xb5, 0x2f, 0xfd)) {
        ("zstd's", "compression=zstd with allowNonTensorFlowCodec=true")
      } else return ""
    if (byName) s"the file's first bytes are $what, but its extension says ${codec.name}: rename it"
    else s"the file's first bytes are $what: set $setting"
  }
}
