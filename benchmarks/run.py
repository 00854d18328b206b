"""Runs the benchmarks (``--help`` says how); the code is the package ``tfrbench`` beside this."""

import sys

from tfrbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
