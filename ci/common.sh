# Shared by ci/quickstart and ci/test: building the jars and wheel, and one virtual environment
# per Spark version with the wheel installed as a user would install it. Sourced, not run.
set -euo pipefail
# Without it, bash runs $(build_wheel) with -e off: a failing sbt (a unit test) would go unnoticed.
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SPARK_TFRECORD_CACHE:-$ROOT/.cache}"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

# The Spark versions the suite runs on: the newest 3.5.x (Scala 2.12 jar), the 4.0 line the
# Spark 4 jar is compiled against, and the newest 4.x (Scala 2.13 jar).
SPARK_MATRIX=("${SPARK_MATRIX[@]:-3.5 4.0 4}")

# The linters, pinned: a new release's rules would fail a change that did not touch them.
RUFF="ruff==0.17.6"
MYPY="mypy==2.4.1"

log() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# pip requirement for a matrix entry: 3.5 -> newest 3.5.x, 4.0 -> newest 4.0.x, 4 -> newest 4.x.
pyspark_spec() {
  case "$1" in
    *.*.*) echo "pyspark==$1" ;;
    *.*) echo "pyspark>=$1,<${1%.*}.$(( ${1#*.} + 1 ))" ;;
    *) echo "pyspark>=$1,<$(( $1 + 1 ))" ;;
  esac
}

# A virtual environment under $CACHE/venv/NAME, created once.
venv() {
  local dir="$CACHE/venv/$1"
  if [ ! -x "$dir/bin/python" ]; then
    "$PYTHON" -m venv "$dir" >&2
    "$dir/bin/python" -m pip install -q --upgrade pip >&2
  fi
  echo "$dir"
}

# Builds the three jars (sbt, incremental) and the wheel; prints the wheel's path. Arguments are
# sbt tasks to run first in the same sbt start: ci/test passes the scalafmt check and `test`.
build_wheel() {
  log "building the jars (ci/sbt $* stageJars writeTestClasspath)"
  bash "$ROOT/ci/sbt" "$@" stageJars writeTestClasspath </dev/null >&2
  local tools
  tools="$(venv tools)"
  "$tools/bin/python" -m pip install -q build "$RUFF" "$MYPY" >&2
  log "building the wheel (python -m build)"
  rm -rf "$ROOT/dist"
  (cd "$ROOT" && "$tools/bin/python" -m build --outdir dist >&2)
  ls "$ROOT"/dist/spark_tfrecord-*.whl
}

# A venv with pyspark for a matrix entry, the given extra packages, and the wheel; prints its path.
spark_env() {
  local spark="$1" wheel="$2"
  shift 2
  local dir
  dir="$(venv "spark-$spark")"
  log "environment for $(pyspark_spec "$spark") in $dir"
  "$dir/bin/python" -m pip install -q "$(pyspark_spec "$spark")" "$@" >&2
  "$dir/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel" >&2
  # Then its dependencies, as a user's pip would, keeping this entry's pyspark.
  "$dir/bin/python" -m pip install -q "$wheel" "$(pyspark_spec "$spark")" >&2
  echo "$dir"
}
