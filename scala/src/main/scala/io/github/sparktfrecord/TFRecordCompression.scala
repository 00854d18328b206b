package io.github.sparktfrecord

import java.io.{InputStream, OutputStream}
import java.util.Locale
import java.util.zip.{Deflater, DeflaterOutputStream, GZIPInputStream, GZIPOutputStream}
import java.util.zip.{Inflater, InflaterInputStream}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.io.compress.{CompressionCodec, CompressionCodecFactory}
import org.apache.hadoop.util.ReflectionUtils

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
    def decompress(in: InputStream, conf: Configuration): InputStream =
      codec(conf).createInputStream(in)
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
          TFRecordOptions.invalid(option, value,
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
          TFRecordOptions.invalid(option, value,
            TensorFlowNames :+ "a Hadoop CompressionCodec class on the class path")
        }
        Hadoop(className)
    }
  }

  /**
   * The codec of a file being read: its extension decides (`.gz`, `.deflate`/`.zlib`, or one a
   * Hadoop codec claims), else the `compression` option, else none.
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
}
