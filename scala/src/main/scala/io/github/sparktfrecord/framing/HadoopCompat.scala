package io.github.sparktfrecord.framing

import java.io.{IOException, InterruptedIOException}
import java.nio.file.{FileSystemException, Files, StandardOpenOption}
import java.util.concurrent.{ConcurrentHashMap, ExecutionException}

import scala.annotation.nowarn

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FSDataInputStream, FSDataOutputStream}
import org.apache.hadoop.fs.{FileSystem, Path, RawLocalFileSystem}
import org.slf4j.LoggerFactory

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
 * without them never links them. A file system whose own `openFile` cannot link or run is read
 * with `open(path)` too, as Parquet reads it: Google's gcs-connector built for a newer Hadoop
 * fails on Spark 3.5's Hadoop 3.3.4 with `NoClassDefFoundError:
 * org/apache/hadoop/fs/Options$OpenFileOptions` (issue 44).
 *
 * A [[ChecksumFileSystem]] (the local file system, `file:`) is read through its raw file system,
 * without its `.crc` side files. Those checksum every 512 bytes of what Hadoop wrote, and a
 * mismatch or a missing chunk would surface as Hadoop's `Checksum error` at offset 0 of the file,
 * whatever `verifyChecksums` says, taking the records before the damage with it under
 * `ignoreCorruptFiles`. The framing's own CRCs protect every record, so damage is reported as it
 * is on any other file system: at the offset of the record it hits (docs/errors.md).
 *
 * Every file we write is created with [[createNew]]: on the local file system, without a `.crc`
 * side file and without the process Hadoop starts per file to set its permissions.
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

  /**
   * `fs` without a checksum file beside each file (the local file system's `.name.crc`): what
   * reads our files, which carry their own CRCs, and what [[createNew]] and [[mkdirs]] look at
   * to tell the local file system.
   */
  def raw(fs: FileSystem): FileSystem = fs match {
    case checksummed: ChecksumFileSystem => checksummed.getRawFileSystem
    case other => other
  }

  /**
   * Creates the file `path` for writing, failing with Hadoop's `FileAlreadyExistsException` if
   * it exists. Elsewhere the file system's `create(path, false)`; on the local file system, the
   * file is created by the JVM, with the process's umask. Hadoop's local `create` also writes a
   * `.crc` side file, which nothing reads (see above), and sets each new file's permissions with
   * a `chmod` child process when Hadoop's native library is not loaded (pip's pyspark has none):
   * two processes a file, milliseconds each, which a write's data files, count files and
   * manifest multiplied. The bytes written still count in the task's output metrics.
   */
  def createNew(path: Path, conf: Configuration): FSDataOutputStream =
    createNew(path.getFileSystem(conf), path)

  /**
   * [[createNew]] on `fs`. `FileSystem.getStatistics` is deprecated, but it is the one public way
   * to the statistics Spark's output metrics read, in every Hadoop from 2.6 to 3.4.
   */
  @nowarn("cat=deprecation")
  def createNew(fs: FileSystem, path: Path): FSDataOutputStream =
    raw(fs) match {
      case local: RawLocalFileSystem =>
        val qualified = fs.makeQualified(path)
        val file = local.pathToFile(qualified).toPath
        val out =
          try {
            Files.createDirectories(file.getParent)
            Files.newOutputStream(file, StandardOpenOption.CREATE_NEW)
          } catch {
            // An existing file, a parent that is a file, no permission: Hadoop's create fails
            // too, with the exception and message its users know.
            case _: FileSystemException => return local.create(qualified, false)
          }
        new FSDataOutputStream(out,
          FileSystem.getStatistics(fs.getUri.getScheme, classOf[RawLocalFileSystem]))
      case other => other.create(path, false)
    }

  /**
   * Makes the folder `path` and its parents, as `fs.mkdirs`, which on the local file system
   * starts a `chmod` process per folder made (see [[createNew]]).
   */
  def mkdirs(fs: FileSystem, path: Path): Boolean = raw(fs) match {
    case local: RawLocalFileSystem =>
      val qualified = fs.makeQualified(path)
      try {
        Files.createDirectories(local.pathToFile(qualified).toPath)
        true
      } catch {
        // A parent that is a file, no permission: as Hadoop's mkdirs says it.
        case _: FileSystemException => local.mkdirs(qualified)
      }
    case other => other.mkdirs(path)
  }

  /**
   * The file system classes whose `openFile` failed to link or run in this JVM, with what it
   * threw: they are opened with `open(path)` from then on, without trying again per file.
   */
  private val plainOpenOnly = new ConcurrentHashMap[Class[_], String]

  /**
   * The buffer size a local file is opened with: one byte, so that no read is copied through a
   * buffer. Hadoop's local streams put a `BufferedInputStream` of `io.file.buffer.size` bytes
   * (64 KiB under Spark) in front of the file, and that buffer takes every read shorter than
   * itself: the file's bytes into it, then into the reader's buffer. The readers read whole
   * buffers of their own; the decompressors read 64 KiB at a time ([[TFRecordCompression]]), or
   * through a buffer (Hadoop's codecs).
   */
  private[framing] final val UnbufferedBytes = 1

  /**
   * Opens `path`, a file of `fileLength` bytes, to be read from its start or a split's: a local
   * file (Hadoop's `RawLocalFileSystem`, which takes no options) with `open(path)` and no buffer
   * in front of it (see [[UnbufferedBytes]]); another with the file system's `openFile` where it
   * links and runs, else with `open(path)`.
   */
  def openForRead(path: Path, conf: Configuration, fileLength: Long): FSDataInputStream = {
    val fs = raw(path.getFileSystem(conf))
    // Hadoop's own, not a subclass that may open files its own way.
    if (fs.getClass == classOf[RawLocalFileSystem]) return fs.open(path, UnbufferedBytes)
    if (hasOpenFile && !plainOpenOnly.containsKey(fs.getClass)) {
      try return OpenFile.sequential(fs, path, fileLength)
      catch {
        case e: Throwable if cannotOpenFile(e) =>
          if (plainOpenOnly.putIfAbsent(fs.getClass, e.toString) == null) {
            LoggerFactory.getLogger(getClass).warn(s"${fs.getClass.getName}.openFile cannot " +
              s"run in this JVM ($e): its files are read with open(path), as Parquet reads them")
          }
      }
    }
    fs.open(path)
  }

  /**
   * Whether `e`, thrown by a file system's `openFile`, says that the call cannot link or run
   * rather than that the file cannot be read: a class or method of a newer Hadoop missing (a
   * `LinkageError`, or a `ClassNotFoundException` the future or a reflective call wrapped), or an
   * `openFile` the file system does not support. A missing file or a refused request is not
   * one: `open(path)` would fail the same way, at the cost of a second request.
   */
  private[framing] def cannotOpenFile(e: Throwable): Boolean = {
    var cause = e
    var depth = 0
    while (cause != null && depth < 8) {
      cause match {
        case _: LinkageError | _: ClassNotFoundException | _: UnsupportedOperationException =>
          return true
        case _ =>
      }
      cause = cause.getCause
      depth += 1
    }
    false
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
