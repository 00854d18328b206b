"""ci/link-duplicates.py, which ci/test runs on its environments: identical files become one,
but never a Python source, whose bytecode holds the time pip installed it (a linked source made
the bytecode of every environment but one stale, and the suites compiled those modules again in
every process); and a stale bytecode file (an environment an older version linked) is compiled
again."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

SCRIPT = ROOT / "ci" / "link-duplicates.py"
BIG = 64 * 1024


def environment(root: Path, name: str, installed: int) -> Path:
    """An environment as pip leaves one: a big module and a library, each file of the time it
    was installed at, and the module's bytecode."""
    site = root / name / "site-packages" / "pkg"
    site.mkdir(parents=True)
    source = site / "big.py"
    source.write_text("VALUES = [\n" + "    1234567890,\n" * (BIG // 16) + "]\n")
    (site / "lib.so").write_bytes(bytes(range(256)) * (BIG // 256))
    for f in (source, site / "lib.so"):
        os.utime(f, (installed, installed))
    py_compile.compile(str(source), doraise=True)
    return site


def loaded(site: Path) -> str:
    """What ``python -v`` says as it imports the module of ``site``, writing no bytecode."""
    command = [sys.executable, "-v", "-c", "import pkg.big"]
    env = {**os.environ, "PYTHONPATH": str(site.parent), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60).stderr


def run(*folders: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPT), *map(str, folders)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_libraries_are_linked_and_sources_keep_their_bytecode(tmp_path: Path) -> None:
    sites = [environment(tmp_path, name, 1_700_000_000 + k) for k, name in enumerate("abc")]
    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 files linked" in done.stdout
    assert {os.stat(s / "lib.so").st_ino for s in sites} == {os.stat(sites[0] / "lib.so").st_ino}
    assert all(os.stat(s / "big.py").st_nlink == 1 for s in sites)
    # each environment's bytecode is still valid: Python loads the module from it rather than
    # compiling it again (what -v says of each)
    for site in sites:
        said = loaded(site)
        assert f"code object from '{site / '__pycache__'}" in said, said[-2000:]
        assert "bytecode is stale for 'pkg.big'" not in said


def test_stale_bytecode_is_compiled_again(tmp_path: Path) -> None:
    site = environment(tmp_path, "a", 1_700_000_000)
    os.utime(site / "big.py", (1_700_000_500, 1_700_000_500))  # as a linked source has
    assert "bytecode is stale for 'pkg.big'" in loaded(site)
    done = run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 stale bytecode files compiled again" in done.stdout
    said = loaded(site)
    assert f"code object from '{site / '__pycache__'}" in said, said[-2000:]
    assert "bytecode is stale" not in said


def test_a_file_a_pip_beside_it_removes_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ci/test's background links the environments while a suite's pip installs the wheel into
    # one of them: a file gone between the walk and its digest once ended the whole background.
    sites = [environment(tmp_path, name, 1_700_000_000 + k) for k, name in enumerate("abc")]
    spec = importlib.util.spec_from_file_location("link_duplicates", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    digest = module.digest

    def removed_meanwhile(path: str) -> bytes:
        if path == str(sites[1] / "lib.so"):
            os.remove(path)
        return digest(path)  # type: ignore[no-any-return]

    monkeypatch.setattr(module, "digest", removed_meanwhile)
    module.main([str(tmp_path)])
    assert "1 files linked" in capsys.readouterr().out
    assert os.stat(sites[2] / "lib.so").st_ino == os.stat(sites[0] / "lib.so").st_ino
    assert not (sites[1] / "lib.so").exists()
