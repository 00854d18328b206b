package io.github.sparktfrecord.framing

import java.io.{IOException, OutputStream}
import java.util.UUID

import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * Writes a file so that it appears whole or not at all: into a hidden file beside it (a name
 * starting with `_`, which readers skip), then renamed over it. A failed write leaves no file
 * behind.
 */
private[sparktfrecord] object AtomicWrite {

  /** Writes `file` with `body`, which writes into the stream it is given (closed after it). */
  def apply(fs: FileSystem, file: Path)(body: OutputStream => Unit): Unit = {
    val temporary = new Path(file.getParent, s"_${file.getName}.${UUID.randomUUID}")
    try {
      val out = HadoopCompat.createNew(fs, temporary)
      try body(out)
      finally out.close()
      if (fs.exists(file) && !fs.delete(file, false)) {
        throw new IOException(s"Cannot replace $file")
      }
      if (!fs.rename(temporary, file)) {
        throw new IOException(s"Cannot rename $temporary to $file")
      }
    } catch {
      case e: Throwable =>
        try fs.delete(temporary, false)
        catch { case d: Exception => e.addSuppressed(d) }
        throw e
    }
  }
}
