"""The package's version, for the wheel and its jars (build.sbt reads it here)."""

__version__ = "0.1.0"
