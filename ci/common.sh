# Shared by ci/quickstart and ci/test: building the jars and wheel, and one virtual environment
# per Spark version with the wheel installed as a user would install it. Sourced, not run.
set -euo pipefail
# Without it, bash runs $(build_wheel) with -e off: a failing sbt (a unit test) would go unnoticed.
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SPARK_TFRECORD_CACHE:-$ROOT/.cache}"
PYTHON="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
# No pip cache: what it would keep (torch's and TensorFlow's downloads, pyspark's built wheels)
# is installed once into $CACHE's environments, which a second run finds in place, while a fresh
# CI machine's disk would hold it twice.
export PIP_NO_CACHE_DIR=1

# The Spark versions the suite runs on: the newest 3.5.x (Scala 2.12 jar), the 4.0 line the
# Spark 4 jar is compiled against, and the newest 4.x (Scala 2.13 jar).
SPARK_MATRIX=("${SPARK_MATRIX[@]:-3.5 4.0 4}")

# The linters, pinned: a new release's rules would fail a change that did not touch them.
RUFF="ruff==0.17.6"
MYPY="mypy==2.4.1"

log() { printf '\n==> [%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# pip's temporary files (a wheel's download and unpacking; torch's `--target` staging, 5 GB) go
# under $CACHE, on the checkout's disk, not in /tmp, which may be a small tmpfs. Only pip's:
# Ray's and Spark's sockets and scratch stay in /tmp, where their paths stay short.
PIP_TMP="$CACHE/pip-tmp"
pip_in() { mkdir -p "$PIP_TMP"; TMPDIR="$PIP_TMP" "$@"; }

# The free space where the installs go, and in /tmp.
disk_report() {
  mkdir -p "$CACHE"
  log "free space: $(df -h --output=avail,target "$CACHE" /tmp | tail -n +2 | awk '{printf "%s on %s; ", $1, $2}')"
}

# Samples the free space on the installs' disk every 5 s in the background, until this script
# ends; at its end (an EXIT trap) prints the least seen and how much the run took at its peak.
disk_watch() {
  local free
  free="$(df --output=avail -B1M "$CACHE" | tail -n 1)"
  echo "$free $free" >"$CACHE/disk-watch"
  (
    while kill -0 "$$" 2>/dev/null && sleep 5; do
      free="$(df --output=avail -B1M "$CACHE" | tail -n 1)"
      read -r start least <"$CACHE/disk-watch"
      if [ "$free" -lt "$least" ]; then
        echo "$start $free" >"$CACHE/disk-watch.new"
        mv "$CACHE/disk-watch.new" "$CACHE/disk-watch"
      fi
    done
  ) >/dev/null 2>&1 &
  trap disk_peak EXIT
}
disk_peak() {
  local start least
  read -r start least <"$CACHE/disk-watch"
  log "free space on the installs' disk: $(awk -v s="$start" -v l="$least" 'BEGIN {
    printf "%.1f GB at the start, %.1f GB at the least: the run took %.1f GB at its peak", \
      s / 1024, l / 1024, (s - l) / 1024 }') (sampled every 5 s)"
}

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

# The checkout as a fresh clone of it is: the files git tracks, as they are in the working tree
# (uncommitted changes included; untracked files are left out, as a clone would lack them), and
# no jars, wheel or egg-info. It is $CACHE/clone, which keeps sbt's output (target/,
# project/target/) from the previous run so that sbt compiles only what changed; on a fresh
# machine (CI) there is none. Prints its path.
fresh_clone() {
  local dir="$CACHE/clone"
  mkdir -p "$dir/project"
  find "$dir" -mindepth 1 -maxdepth 1 ! -name target ! -name project -exec rm -rf {} +
  find "$dir/project" -mindepth 1 -maxdepth 1 ! -name target ! -name project -exec rm -rf {} +
  (
    cd "$ROOT"
    git ls-files -z | while IFS= read -r -d '' f; do
      if [ -e "$f" ]; then printf '%s\0' "$f"; fi # not a tracked file deleted in the tree
    done | tar --null -T - -cf -
  ) | tar -xf - -C "$dir"
  echo "$dir"
}

# Builds the wheel as a fresh clone builds it, with `python -m build` (the sdist, then the wheel
# from the sdist) in fresh_clone's copy, where no jar exists yet: setup.py runs
# `ci/sbt stageJars` itself. Puts both into $ROOT/dist, checks that each carries the three jars,
# and prints the wheel's path. Arguments are sbt tasks to run first in the copy, so that sbt
# compiles once: ci/test passes the formatting check and the unit tests (and writeTestClasspath,
# whose class path file is copied to $ROOT/target/ for the tests).
build_wheel() {
  local clone tools
  clone="$(fresh_clone)"
  if [ "$#" -gt 0 ]; then
    log "ci/sbt $* in a fresh copy of the checkout ($clone)"
    SPARK_TFRECORD_CACHE="$CACHE" bash "$clone/ci/sbt" "$@" </dev/null >&2
    if [ -f "$clone/target/spark3.5_2.13.classpath" ]; then
      mkdir -p "$ROOT/target"
      cp "$clone/target/spark3.5_2.13.classpath" "$ROOT/target/"
    fi
  fi
  tools="$(venv tools)"
  "$tools/bin/python" -m pip install -q build "$RUFF" "$MYPY" pytest pytest-timeout >&2
  log "building the sdist and the wheel (python -m build in $clone, which has no jars yet)"
  rm -rf "$ROOT/dist"
  (cd "$clone" && SPARK_TFRECORD_CACHE="$CACHE" "$tools/bin/python" -m build --outdir "$ROOT/dist" >&2)
  "$tools/bin/python" - "$ROOT"/dist/spark_tfrecord-*.tar.gz "$ROOT"/dist/spark_tfrecord-*.whl <<'PY' >&2
import re, sys, tarfile, zipfile
for artifact in sys.argv[1:]:
    if artifact.endswith(".whl"):
        names = zipfile.ZipFile(artifact).namelist()
    else:
        names = tarfile.open(artifact).getnames()
    jars = sorted(n.rsplit("/", 1)[1] for n in names if re.search(r"spark_tfrecord/jars/[^/]+[.]jar$", n))
    if [re.sub(r"-[^-]+[.]jar$", "", j) for j in jars] != [
        "spark-tfrecord-spark3.5_2.12", "spark-tfrecord-spark3.5_2.13", "spark-tfrecord-spark4_2.13"
    ]:
        sys.exit(f"{artifact} does not carry the three jars: {jars}")
    print(f"{artifact.rsplit('/', 1)[1]}: {', '.join(jars)}")
    if artifact.endswith(".whl"):
        # The trainer-side packages are extras (pip install "spark-tfrecord[torch]"), never
        # dependencies: a Spark user must not get torch's gigabytes with the wheel.
        wheel = zipfile.ZipFile(artifact)
        (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        lines = wheel.read(metadata).decode().splitlines()
        extras = {l.split(":", 1)[1].strip() for l in lines if l.startswith("Provides-Extra:")}
        requires = [l.split(":", 1)[1].strip() for l in lines if l.startswith("Requires-Dist:")]
        wanted = {
            "spark": {"pyspark"},
            "local": {"pyspark", "jpype1"},
            "torch": {"torch", "numpy", "google-crc32c"},
            "grain": {"grain", "numpy", "google-crc32c"},
            "s3": {"s3fs"},
            "gcs": {"gcsfs"},
        }
        for extra, names in wanted.items():
            got = {re.split(r"[ ;<>=!\[]", r, 1)[0] for r in requires if re.search(rf"extra == .{extra}.", r)}
            if extra not in extras or got != names:
                sys.exit(f"{artifact}: extra {extra!r} should require {sorted(names)}, not {sorted(got)}")
        plain = [r for r in requires if "extra ==" not in r]
        # No Spark either: the wheel installs beside any Spark client (tests/install). NumPy is
        # a dependency: the format package, which the command's inspect and index run on.
        heavy = [
            r for r in plain
            if re.match(r"(torch|grain|s3fs|gcsfs|fsspec|tensorflow|pyspark|py4j|jpype1)\b", r)
        ]
        if heavy:
            sys.exit(f"{artifact}: {heavy} are dependencies, not extras")
        print(f"  extras: {', '.join(sorted(extras))}; dependencies: {', '.join(plain)}")
PY
  ls "$ROOT"/dist/spark_tfrecord-*.whl
}

# A venv with pyspark for a matrix entry, the given extra packages, and the wheel; prints its path.
spark_env() {
  local spark="$1" wheel="$2"
  shift 2
  local dir
  dir="$(venv "spark-$spark")"
  log "environment for $(pyspark_spec "$spark") in $dir"
  pip_in "$dir/bin/python" -m pip install -q "$(pyspark_spec "$spark")" "$@" >&2
  pip_in "$dir/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel" >&2
  # Then its dependencies, as a user's pip would, keeping this entry's pyspark.
  pip_in "$dir/bin/python" -m pip install -q "$wheel" "$(pyspark_spec "$spark")" >&2
  echo "$dir"
}
