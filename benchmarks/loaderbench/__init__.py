"""``benchmarks/loaders.py``: the trainer-side loaders (``torch_dataset``) against the ``tfrecord``
package's and Petastorm's, one role per module.

- ``data``: the two data sets (narrow records, image-sized ones), written by Spark once, with
  index files, and the count and value sums each epoch must give.
- ``batches``: each loader under test as a function that makes its batches, and what a batch
  adds to the checked sums.
- ``measure``: the epochs, timed in turns (``tfrbench.timing.interleaved``) and checked, in a
  child process with no JVM, as a trainer runs; Petastorm's in the parent, beside its session.
- ``report``: the tables and ratios of one run.
"""
