package io.github.sparktfrecord

/**
 * The readable text of an error, after the `[CONDITION] ` its message starts with: what the
 * suites compare, while [[TFRecordErrorSuite]] checks the conditions themselves.
 */
object ErrorText {
  implicit class TextOf(val e: Throwable) extends AnyVal {
    def text: String = e.getMessage.replaceFirst("^\\[[A-Z_.]+\\] ", "")
  }
}
