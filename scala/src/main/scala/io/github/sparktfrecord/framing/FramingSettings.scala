package io.github.sparktfrecord.framing

/**
 * What a [[TFRecordReader]] needs to know when it opens a file: the few options that concern the
 * framing, and what the reader is for. Given whole when the reader opens, never changed after.
 *
 * @param compression     for files whose extension does not say (see [[TFRecordCompression]])
 * @param maxRecordBytes  a larger length field is refused before anything is allocated
 * @param verifyChecksums whether to check each record's data CRC (the length CRC is always
 *                        checked: without it a corrupt length would be trusted)
 * @param keepData        whether each record's data is copied out for the caller; without it
 *                        (`count()`, an index) records are only checksummed where they lie
 */
private[sparktfrecord] final case class FramingSettings(
    compression: TFRecordCompression,
    maxRecordBytes: Int,
    verifyChecksums: Boolean,
    keepData: Boolean)
