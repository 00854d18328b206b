"""The pipeline's third stage, entries: the ``Example`` / ``SequenceExample`` inside a frame.
Protobuf's wire format (:mod:`.wire`), the one walk of a record's features (:mod:`.walk`)
and their values (:mod:`.lists`), the record decoder (:mod:`.decoder`), and the batch
decoder, which predicts a batch's layout from one of its records (:mod:`.record_layout`), walks
only the records that stray from it together (:mod:`.batch`), finds a batch of
SequenceExamples' context and feature lists and the lists' steps (:mod:`.sequence`) and
gathers bytes entries (:mod:`.entries`); what inference samples of each feature
(:mod:`.feature_stats`)."""
