"""The package's version: one number for the wheel and the jars inside it (build.sbt reads it
here)."""

__version__ = "0.1.0"
