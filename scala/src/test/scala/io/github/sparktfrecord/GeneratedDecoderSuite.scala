package io.github.sparktfrecord

/** [[TFRecordDeserializerSuite]] through the decoder generated per schema. */
class GeneratedDecoderSuite extends TFRecordDeserializerSuite(true)
