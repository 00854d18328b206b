package io.github.sparktfrecord.json

/**
 * JSON text that is not JSON (with its line and column), or a JSON value that is not what the
 * reader asked for (a missing field, a string where a number belongs).
 */
private[sparktfrecord] final class JsonException(message: String)
  extends IllegalArgumentException(message)
