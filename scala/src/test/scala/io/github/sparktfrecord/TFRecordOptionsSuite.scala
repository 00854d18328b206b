package io.github.sparktfrecord

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import org.apache.hadoop.conf.Configuration

import org.apache.spark.sql.catalyst.util.{DropMalformedMode, FailFastMode, PermissiveMode}
import org.apache.spark.sql.internal.SQLConf

import ErrorText._

import io.github.sparktfrecord.codec.RecordType
import io.github.sparktfrecord.framing.TFRecordCompression
import io.github.sparktfrecord.sql.TFRecordOptions

/** Every option's valid and invalid values, the Hadoop configuration, and docs/options.md. */
class TFRecordOptionsSuite extends UnitSuite {
  import TFRecordOptions._

  private def options(pairs: (String, String)*): TFRecordOptions =
    new TFRecordOptions(pairs.toMap)

  /** The message of an invalid value, which lists the valid ones. */
  private def invalid(option: String, value: String): String =
    intercept[IllegalArgumentException](options(option -> value)).text

  private def validValues(option: String, value: String, valid: String): String =
    s"Invalid value '$value' for TFRecord option '$option'. Valid values: $valid."

  test("the defaults") {
    val o = options()
    assertEquals(o.recordType, RecordType.Example)
    assertEquals(o.compression, TFRecordCompression.None)
    assertEquals(o.allowNonTensorFlowCodec, false)
    assertEquals(o.mode, FailFastMode)
    assertEquals(o.columnNameOfCorruptRecord, SQLConf.get.columnNameOfCorruptRecord)
    assertEquals(o.inferSchemaMaxFiles, 32)
    assertEquals(o.inferSchemaMaxRecords, 1000)
    assertEquals(o.verifyChecksums, true)
    assertEquals(o.maxRecordBytes, Int.MaxValue - 64)
    assertEquals(o.splitFiles, true)
    assertEquals(o.ignoreCorruptFiles, false)
    assertEquals(o.ignoreMissingFiles, false)
    assertEquals(o.fastPath, true)
    assertEquals(o.sparseVectors, false)
  }

  test("vectorLayout: dense or sparse, in any case; another value lists them") {
    assertEquals(options("vectorLayout" -> "Sparse").sparseVectors, true)
    assertEquals(options("VECTORLAYOUT" -> "dense").sparseVectors, false)
    val e = intercept[IllegalArgumentException](options("vectorLayout" -> "csr"))
    assertEquals(e.text, validValues("vectorLayout", "csr", "dense, sparse"))
    assertEquals(e.asInstanceOf[TFRecordError].condition, TFRecordError.InvalidOption)
  }

  test("decoder: generated or interpreted, in any case") {
    assertEquals(options("decoder" -> "Interpreted").fastPath, false)
    assertEquals(options("decoder" -> "GENERATED").fastPath, true)
    assertEquals(options("Decoder" -> "generated").fastPath, true)
    val e = intercept[IllegalArgumentException](options("decoder" -> "jit"))
    assertEquals(e.text, validValues("decoder", "jit", "generated, interpreted"))
    assertEquals(e.asInstanceOf[TFRecordError].condition, TFRecordError.InvalidOption)
  }

  test("recordType: the three names in any case") {
    assertEquals(options("recordType" -> "example").recordType, RecordType.Example)
    assertEquals(options("recordType" -> "SEQUENCEEXAMPLE").recordType,
      RecordType.SequenceExample)
    assertEquals(options("recordType" -> " ByteArray ").recordType, RecordType.ByteArray)
    for (bad <- Seq("csv", "", "Examples")) {
      assertEquals(invalid("recordType", bad),
        validValues("recordType", bad, "Example, SequenceExample, ByteArray"))
    }
  }

  test("mode: Spark's three parse modes in any case") {
    assertEquals(options("mode" -> "permissive").mode, PermissiveMode)
    assertEquals(options("mode" -> "DropMalformed").mode, DropMalformedMode)
    assertEquals(options("mode" -> "FAILFAST").mode, FailFastMode)
    assertEquals(invalid("mode", "lenient"),
      validValues("mode", "lenient", "FAILFAST, PERMISSIVE, DROPMALFORMED"))
  }

  test("inferSchemaMaxFiles and inferSchemaMaxRecords: a positive integer or -1") {
    for (name <- Seq("inferSchemaMaxFiles", "inferSchemaMaxRecords")) {
      def value(o: TFRecordOptions): Int =
        if (name == "inferSchemaMaxFiles") o.inferSchemaMaxFiles else o.inferSchemaMaxRecords
      assertEquals(value(options(name -> "1")), 1)
      assertEquals(value(options(name -> " 7 ")), 7)
      assertEquals(value(options(name -> "2147483647")), Int.MaxValue)
      assertEquals(value(options(name -> "-1")), Int.MaxValue)
      for (bad <- Seq("0", "-2", "1.5", "ten", "", "2147483648")) {
        assertEquals(invalid(name, bad),
          validValues(name, bad, "a positive integer, -1 (no limit)"))
      }
    }
  }

  test("maxRecordBytes: from 1 to the largest array") {
    assertEquals(options("maxRecordBytes" -> "1").maxRecordBytes, 1)
    assertEquals(options("maxRecordBytes" -> "2147483583").maxRecordBytes, 2147483583)
    for (bad <- Seq("0", "-1", "2147483584", "1k", "")) {
      assertEquals(invalid("maxRecordBytes", bad),
        validValues("maxRecordBytes", bad, "an integer from 1 to 2147483583"))
    }
  }

  test("the booleans: true or false in any case") {
    val booleans = Seq[(String, TFRecordOptions => Boolean)](
      "allowNonTensorFlowCodec" -> (_.allowNonTensorFlowCodec),
      "verifyChecksums" -> (_.verifyChecksums),
      "splitFiles" -> (_.splitFiles),
      "ignoreCorruptFiles" -> (_.ignoreCorruptFiles),
      "ignoreMissingFiles" -> (_.ignoreMissingFiles))
    for ((name, get) <- booleans) {
      assertEquals(get(options(name -> "TRUE")), true, name)
      assertEquals(get(options(name -> " false")), false, name)
      assertEquals(get(options(name -> "True")), true, name)
      for (bad <- Seq("yes", "1", "")) {
        assertEquals(invalid(name, bad), validValues(name, bad, "true, false"), name)
      }
    }
  }

  test("columnNameOfCorruptRecord: any name") {
    assertEquals(options("columnNameOfCorruptRecord" -> "bad").columnNameOfCorruptRecord, "bad")
  }

  test("compression: TensorFlow's codecs and their aliases, in any case") {
    import TFRecordCompression._
    val expected = Seq("none" -> None, "NONE" -> None, "uncompressed" -> None, "" -> None,
      "gzip" -> Gzip, "GZIP" -> Gzip, "gz" -> Gzip, "deflate" -> Deflate, "zlib" -> Deflate,
      "ZLIB" -> Deflate, "org.apache.hadoop.io.compress.GzipCodec" -> Gzip,
      "org.apache.hadoop.io.compress.DeflateCodec" -> Deflate,
      "org.apache.hadoop.io.compress.DefaultCodec" -> Deflate)
    for ((value, codec) <- expected; option <- Seq("compression", "codec")) {
      assertEquals(options(option -> value).compression, codec, s"$option=$value")
    }
    assertEquals((Gzip.extension, Deflate.extension, None.extension), (".gz", ".deflate", ""))
  }

  test("compression: other codecs only with allowNonTensorFlowCodec") {
    for ((value, className) <- Seq("snappy" -> "org.apache.hadoop.io.compress.SnappyCodec",
        "BZip2" -> "org.apache.hadoop.io.compress.BZip2Codec",
        "org.apache.hadoop.io.compress.BZip2Codec" -> "org.apache.hadoop.io.compress.BZip2Codec")) {
      val e = intercept[IllegalArgumentException](options("compression" -> value))
      assertEquals(e.text,
        s"TFRecord option 'compression' is '$value', a codec " +
          "TensorFlow cannot read (TFRecordDataset reads only GZIP and ZLIB). Use compression " +
          "gzip or deflate, or set allowNonTensorFlowCodec=true if the files are only for Spark.")
      assertEquals(options("compression" -> value, "allowNonTensorFlowCodec" -> "true")
          .compression, TFRecordCompression.Hadoop(className))
    }
    assertEquals(TFRecordCompression.Hadoop("org.apache.hadoop.io.compress.BZip2Codec")
        .extension, ".bz2")
  }

  test("compression: an unknown value lists the valid ones, under the name it was given as") {
    for (option <- Seq("compression", "codec")) {
      val message = invalid(option, "brotli")
      assert(message.startsWith(s"Invalid value 'brotli' for TFRecord option '$option'. " +
          "Valid values: none, gzip, deflate, zlib, "), message)
      for (other <- Seq("snappy", "bzip2", "lz4", "zstd", "a Hadoop CompressionCodec class")) {
        assert(message.contains(other), message)
      }
    }
  }

  test("compression: a codec class that is not on the class path fails when parsed") {
    intercept[IllegalArgumentException](options("compression" -> "com.example.NoSuchCodec",
      "allowNonTensorFlowCodec" -> "true"))
  }

  test("compression wins over codec") {
    assertEquals(options("codec" -> "org.apache.hadoop.io.compress.GzipCodec",
      "compression" -> "deflate").compression, TFRecordCompression.Deflate)
    // codec is then not even parsed.
    assertEquals(options("codec" -> "brotli", "compression" -> "gzip").compression,
      TFRecordCompression.Gzip)
  }

  test("shuffleSeed: a 64-bit integer, with numShards") {
    assertEquals(options("numShards" -> "3", "ShuffleSeed" -> " -9223372036854775808")
        .shuffleSeed, Some(Long.MinValue))
    assertEquals(options("numShards" -> "3").shuffleSeed, None)
    val valid = "a 64-bit integer (-9223372036854775808 to 9223372036854775807), with numShards"
    assertEquals(intercept[IllegalArgumentException](
        options("numShards" -> "3", "shuffleSeed" -> "9223372036854775808")).text,
      validValues("shuffleSeed", "9223372036854775808", valid))
    assertEquals(intercept[IllegalArgumentException](
        options("numShards" -> "3", "shuffleSeed" -> "seven")).text,
      validValues("shuffleSeed", "seven", valid))
    assertEquals(invalid("shuffleSeed", "7"),
      validValues("shuffleSeed", "7",
        "a 64-bit integer, with numShards (it orders the rows of the numShards files)"))
  }

  test("option names are case-insensitive") {
    val o = options("RECORDTYPE" -> "SequenceExample", "Compression" -> "gzip",
      "maxrecordbytes" -> "10", "MODE" -> "permissive", "IGNORECORRUPTFILES" -> "true")
    assertEquals((o.recordType, o.compression, o.maxRecordBytes, o.mode, o.ignoreCorruptFiles),
      (RecordType.SequenceExample, TFRecordCompression.Gzip, 10, PermissiveMode, true))
    // An error names the option as documented, however it was spelled.
    assertEquals(invalid("MaxRecordBytes", "0"),
      validValues("maxRecordBytes", "0", "an integer from 1 to 2147483583"))
  }

  test("a Hadoop Configuration: tfrecord.-prefixed keys (the prefix case-sensitive)") {
    val conf = new Configuration(false)
    conf.set("tfrecord.recordType", "SequenceExample")
    conf.set("tfrecord.MAXRECORDBYTES", "99")
    conf.set("TFRECORD.mode", "permissive")
    conf.set("Tfrecord.splitFiles", "false")
    conf.set("compression", "gzip")
    conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    val o = new TFRecordOptions(conf)
    assertEquals(o.recordType, RecordType.SequenceExample)
    assertEquals(o.maxRecordBytes, 99)
    assertEquals(o.mode, FailFastMode)
    assertEquals(o.splitFiles, true)
    assertEquals(o.compression, TFRecordCompression.None)
    assertEquals(o.ignoreCorruptFiles, false)
    conf.set("tfrecord.mode", "bad")
    assertEquals(intercept[IllegalArgumentException](new TFRecordOptions(conf)).text,
      validValues("mode", "bad", "FAILFAST, PERMISSIVE, DROPMALFORMED"))
  }

  test("outside a session the SQL defaults are Spark's, whatever the session's conf says") {
    val sqlConf = new SQLConf
    sqlConf.setConfString("spark.sql.files.ignoreCorruptFiles", "true")
    sqlConf.setConfString("spark.sql.files.ignoreMissingFiles", "true")
    sqlConf.setConfString("spark.sql.columnNameOfCorruptRecord", "_bad")
    SQLConf.withExistingConf(sqlConf) {
      val inSession = options()
      assertEquals((inSession.ignoreCorruptFiles, inSession.ignoreMissingFiles,
        inSession.columnNameOfCorruptRecord), (true, true, "_bad"))
      val conf = new Configuration(false)
      val fromConf = new TFRecordOptions(conf)
      assertEquals((fromConf.ignoreCorruptFiles, fromConf.ignoreMissingFiles,
        fromConf.columnNameOfCorruptRecord), (false, false, "_corrupt_record"))
      val map = new java.util.HashMap[String, String]
      map.put("IgnoreCorruptFiles", "true")
      map.put("columnnameofcorruptrecord", "_mine")
      val tool = sessionFree(map)
      assertEquals((tool.ignoreCorruptFiles, tool.ignoreMissingFiles,
        tool.columnNameOfCorruptRecord), (true, false, "_mine"))
      conf.set("tfrecord.ignoreMissingFiles", "true")
      assertEquals(new TFRecordOptions(conf).ignoreMissingFiles, true)
    }
  }

  test("docs/options.md has one table row per option, and no other") {
    val root = sys.props.get("sparktfrecord.root").getOrElse(
      fail("the build sets -Dsparktfrecord.root to the checkout (see build.sbt)"))
    val doc = new String(Files.readAllBytes(Paths.get(root, "docs", "options.md")), UTF_8)
    val row = """^\| `([^`]+)` \|""".r
    val documented = doc.split("\n").toSeq.flatMap(line => row.findPrefixMatchOf(line))
      .map(_.group(1))
    assertEquals(documented.sorted, getAllOptions.toSeq.sorted)
  }

  test("the options are declared once each, codec as compression's other name") {
    val names = getAllOptions.toSeq
    assertEquals(names.size, 28)
    assertEquals(names.map(_.toLowerCase).distinct.size, names.size)
    assertEquals(getAlternativeOption(CodecOption), Some(CompressionOption))
    assertEquals(getAlternativeOption(CompressionOption), Some(CodecOption))
    assert(isValidOption(IgnoreCorruptFilesOption) && !isValidOption("recordTyp"))
  }
}
