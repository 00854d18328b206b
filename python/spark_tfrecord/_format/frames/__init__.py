"""The pipeline's second stage, frames: the TFRecord framing of a file's bytes. One reader of
frames with their CRC32C checks (:mod:`.framing`, :mod:`.crc`) and one writer
(:mod:`.frames`, :mod:`.record_writer`), compression (:mod:`.compression`), the records of
files read in order (:mod:`.file_records`) or at random (:mod:`.records`), the manifest's
files and counts (:mod:`.manifest`), and the jar's read options (:mod:`.read_options`)."""
