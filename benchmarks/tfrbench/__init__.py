"""The benchmarks of ``benchmarks/*.py``, one role per module.

- ``data``: the data sets (schemas, generators) and the files they are written to.
- ``sessions``: the Spark sessions, and the data sources and jars they hold.
- ``timing``: the harness: timed runs taking turns, their wall clock and CPU time; ``Bench``.
- ``child``: the one way a measurement runs in a child process and hands its result back.
- ``checks``: the correctness checks; a failed one stops the run.
- ``measure``: the measurements in ``run.py``'s main session, and the facts of the machine.
- ``splitting``: one file read in fresh 1- and 2-core sessions, each in a child process.
- ``tfdata``, ``peers``, ``nesting``: tf.data, tfx-bsl and Ray Data, and ``nested.py``, each
  in a child process.
- ``profiling``: where the time goes, from async-profiler's samples of one workload.
- ``page``: ``docs/benchmarks.md``, rendered from a run's results by ``benchmarks/page.toml``.
- ``chart``: ``docs/benchmarks.png``.
- ``cli``: the arguments of ``benchmarks/run.py`` and the order of the run.
"""
