package io.github.sparktfrecord.framing

import java.io.{IOException, InterruptedIOException}
import java.util.concurrent.ExecutionException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FSDataInputStream, FileSystem, Path}

/**
 * The Hadoop calls that newer Hadoop releases added, made to work on whatever Hadoop the class
 * path has. Spark 3.5 and 4.x ship Hadoop 3.3 or later, but a build may put an older
 * hadoop-common ahead of Spark's Hadoop client: Maven builds that depend on tensorflow-hadoop
 * (as linkedin spark-tfrecord's users do) get hadoop-common 2.6.0 first.
 *
 * Every reader of records (the data source's scan and inference, the Hadoop input format, the
 * index writer, the inspector) opens its files with [[openForRead]]. Hadoop 3.3 added
 * `FileSystem.openFile`, which tells an object store how a file will be read (see [[OpenFile]]);
 * without it, files are opened with `open(path)`, which every Hadoop has. Which of the two is
 * decided once per JVM, and the Hadoop 3.3 calls live in an object of their own, so a JVM
 * without them never links them.
 *
 * A [[ChecksumFileSystem]] (the local file system, `file:`) is read through its raw file system,
 * without its `.crc` side files. Those checksum every 512 bytes of what Hadoop wrote, and a
 * mismatch or a missing chunk would surface as Hadoop's `Checksum error` at offset 0 of the file,
 * whatever `verifyChecksums` says, taking the records before the damage with it under
 * `ignoreCorruptFiles`. The framing's own CRCs protect every record, so damage is reported as it
 * is on any other file system: at the offset of the record it hits (docs/errors.md).
 */
private[sparktfrecord] object HadoopCompat {

  /** Whether `FileSystem.openFile` exists (Hadoop 3.3 and later): looked up once per JVM. */
  lazy val hasOpenFile: Boolean =
    try {
      classOf[FileSystem].getMethod("openFile", classOf[Path])
      true
    } catch {
      case _: NoSuchMethodException => false
    }

  /** Opens `path`, a file of `fileLength` bytes, to be read from its start or a split's. */
  def openForRead(path: Path, conf: Configuration, fileLength: Long): FSDataInputStream = {
    val fs = path.getFileSystem(conf) match {
      case checksummed: ChecksumFileSystem => checksummed.getRawFileSystem
      case other => other
    }
    if (hasOpenFile) OpenFile.sequential(fs, path, fileLength) else fs.open(path)
  }

  /**
   * The entries of `conf` whose keys start with `prefix`, keyed by the rest, values expanded as
   * `conf.get` expands them: `Configuration.getPropsWithPrefix`, which Hadoop 2.8 added.
   */
  def propsWithPrefix(conf: Configuration, prefix: String): java.util.Map[String, String] = {
    val found = new java.util.HashMap[String, String]
    val it = conf.iterator()
    while (it.hasNext) {
      val key = it.next().getKey
      if (key.startsWith(prefix)) found.put(key.substring(prefix.length), conf.get(key))
    }
    found
  }
}

/**
 * The Hadoop 3.3 calls of [[HadoopCompat]], used only when `FileSystem.openFile` exists.
 *
 * A file is opened to be read from a position to the end of a split or of the file, and the file
 * system is told so: an object store's client then fetches the rest in one request, instead of
 * switching to short ranged reads when a split start's search seeks back (S3A's adaptive policy
 * does, one GET per 64 KiB). The known length spares it a metadata request. Options a file system
 * does not know are ignored.
 */
private object OpenFile {
  def sequential(fs: FileSystem, path: Path, fileLength: Long): FSDataInputStream = {
    val builder = fs.openFile(path)
    builder.opt("fs.option.openfile.read.policy", "sequential") // Hadoop 3.3.5 and later
    builder.opt("fs.s3a.experimental.input.fadvise", "sequential") // S3A before that
    builder.opt("fs.option.openfile.length", fileLength.toString)
    // Hadoop's FutureIO.awaitFuture does this, but only from Hadoop 3.3.1 on.
    try builder.build().get()
    catch {
      case e: ExecutionException => e.getCause match {
          case cause: IOException => throw cause
          case cause: RuntimeException => throw cause
          case cause: Error => throw cause
          case cause => throw new IOException(cause)
        }
      case _: InterruptedException =>
        Thread.currentThread().interrupt()
        throw new InterruptedIOException(s"Interrupted while opening $path")
    }
  }
}
