"""The benchmarks that ``benchmarks/run.py`` and ``benchmarks/ab.py`` run, one role per module.

- ``data``: the narrow, wide, wide-1000 and image-sized data sets (schemas, generators) and the
  files they are written to.
- ``sessions``: the Spark sessions, the data sources and jars they hold, and child processes.
- ``timing``: wall clock and CPU time of timed runs, and ``Bench``, which keeps every run.
- ``checks``: the correctness checks; a failed one stops the run.
- ``measure``: the measurements in the main session, and what their runs come to.
- ``splitting``: one file read in fresh 1- and 2-core sessions, each in a child process.
- ``tfdata``: TensorFlow's tf.data reading our narrow files, in a child process.
- ``profiling``: where the time goes, from Java Flight Recorder samples of one workload.
- ``goals``: the targets, and whether the figures met them.
- ``report``: the facts of the machine and the Markdown of ``docs/benchmarks.md``.
- ``chart``: ``docs/benchmarks.png``.
- ``cli``: the arguments of ``benchmarks/run.py`` and the order of the run.
"""
