"""Hard-links the identical files under the given folders into one file each.

ci/test's environments hold the same packages several times over: tensorflow-cpu (1.3 GB) in
each Spark's environment, and pyarrow, pandas, grpc, moto beside it. Linked, they take 3.8 GiB
less of a CI machine's disk (12 GB before), whose free space a run once used up. A
link is safe where pip and Python write: pip deletes a file before it writes one in its place
(an upgrade in one environment leaves the others' copy whole), and Python writes its bytecode
to a new file that it renames into place. A pip may run in one of the folders meanwhile (ci/test
installs the wheel into an environment while the background links the others): a file it
removes between the walk and the link is left out.

Only regular files of MIN_BYTES or more, with the same size, mode and contents, are linked; a
file is replaced by a link through a rename, so that a run cut short leaves each path either
the old file or the link. Python sources (.py) are never linked: pip gives each file the time
it installed it, and a module's bytecode (__pycache__) holds its source's modification time, so
a source linked to another environment's copy makes its bytecode stale; with
PYTHONDONTWRITEBYTECODE=1 (set on this kind of machine) every process then compiles such a module
again, and the suites ran at half their speed. The sources are 0.3 GiB of the 3.8 GiB linked.
After linking, every bytecode file of a source under the folders is checked against its
source, and a stale one (an environment that an older version of this script linked) is
compiled again.

Usage: python3 ci/link-duplicates.py FOLDER [FOLDER ...]. Prints what it saved.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import py_compile
import stat
import sys
from collections import defaultdict

MIN_BYTES = 16 * 1024


def files(folders: list[str]) -> dict[tuple[int, int, int], list[str]]:
    """The regular files of MIN_BYTES or more by (device, size, mode), one path per inode."""
    found: dict[tuple[int, int, int], list[str]] = defaultdict(list)
    inodes: set[tuple[int, int]] = set()
    for folder in folders:
        for parent, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(parent, name)
                try:
                    st = os.lstat(path)
                except FileNotFoundError:  # removed since the walk listed it
                    continue
                if not stat.S_ISREG(st.st_mode) or st.st_size < MIN_BYTES or name.endswith(".py"):
                    continue
                if (st.st_dev, st.st_ino) not in inodes:
                    inodes.add((st.st_dev, st.st_ino))
                    found[(st.st_dev, st.st_size, st.st_mode)].append(path)
    return found


def digest(path: str) -> bytes:
    h = hashlib.blake2b()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.digest()


def link(original: str, duplicate: str) -> None:
    """Replaces ``duplicate`` by a hard link to ``original``."""
    staged = f"{duplicate}.link-duplicates"
    os.link(original, staged)
    os.replace(staged, duplicate)


def stale(source: str) -> bool:
    """Whether the timestamped bytecode (this Python's) of ``source`` is not of its modification
    time and size, the two that Python checks before it uses the bytecode (False: no bytecode,
    or bytecode checked by hash)."""
    try:
        with open(importlib.util.cache_from_source(source), "rb") as f:
            header = f.read(16)
    except OSError:
        return False
    if len(header) < 16 or int.from_bytes(header[4:8], "little") != 0:
        return False
    try:
        st = os.stat(source)
    except FileNotFoundError:
        return False
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return (mtime, size) != (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)


def stale_bytecode(folders: list[str]) -> list[str]:
    """The sources under ``folders`` whose bytecode is stale."""
    return [
        os.path.join(parent, name)
        for folder in folders
        for parent, _, names in os.walk(folder)
        for name in names
        if name.endswith(".py") and stale(os.path.join(parent, name))
    ]


def main(folders: list[str]) -> None:
    saved = linked = 0
    for (_, size, _), paths in files(folders).items():
        if len(paths) < 2:
            continue
        first: dict[bytes, str] = {}
        for path in paths:
            try:
                original = first.setdefault(digest(path), path)
                if original == path:
                    continue
                link(original, path)
            except FileNotFoundError:  # a pip beside this one removed it (or the original)
                continue
            saved += size
            linked += 1
    print(f"link-duplicates: {linked} files linked, {saved / 2**30:.1f} GiB saved")
    outdated = stale_bytecode(folders)
    for source in outdated:
        with contextlib.suppress(FileNotFoundError):  # removed meanwhile, as above
            py_compile.compile(source, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    if outdated:
        print(
            f"link-duplicates: {len(outdated)} stale bytecode files compiled again "
            f"({outdated[0]}, ...)"
        )
    if any(stale(source) for source in outdated):
        sys.exit("link-duplicates: bytecode still stale after compiling it again")


if __name__ == "__main__":
    main([f for f in sys.argv[1:] if os.path.isdir(f)])
