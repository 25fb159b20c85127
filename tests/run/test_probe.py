"""The torch probe runs in the target interpreter (real CPU torch here) and is cached."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from contribkit.core.cache import JsonCache
from contribkit.core.errors import BadInput
from contribkit.run.probe import cached_probe, probe_torch


@pytest.mark.slow
def test_probe_real_torch(tmp_path: Path) -> None:
    info = probe_torch(sys.executable, JsonCache(tmp_path, "probes"), scrub=())
    assert info.torch and info.torch_version and info.torch_version.startswith("2.")
    assert info.git_version
    assert info.cuda_available is False and info.device_names == []


def _stub_python(tmp_path: Path, counter: Path) -> Path:
    stub = tmp_path / "python"
    stub.write_text(
        "#!/bin/sh\n"
        f"echo x >> {counter}\n"
        'echo \'CONTRIBKIT_PROBE {"executable": "stub", "python_version": "3.12.0", "torch": true, '
        '"torch_version": "2.99.0a0+gitabc", "git_version": "abc", "debug": true, "cuda_available": true, '
        '"device_count": 1, "device_names": ["Fake GPU"]}\'\n'
    )
    stub.chmod(0o755)
    return stub


def test_probe_is_cached_per_interpreter_and_mtime(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    stub = _stub_python(tmp_path, counter)
    cache = JsonCache(tmp_path / "cache", "probes")
    first = probe_torch(str(stub), cache, scrub=())
    second = probe_torch(str(stub), cache, scrub=())
    assert first == second and first.debug and first.device_names == ["Fake GPU"]
    assert len(counter.read_text().splitlines()) == 1
    st = stub.stat()
    os.utime(stub, (st.st_atime, st.st_mtime + 10))
    probe_torch(str(stub), cache, scrub=())
    assert len(counter.read_text().splitlines()) == 2


def test_each_probe_script_has_its_own_cache_entry(tmp_path: Path) -> None:
    # The key holds the script's name and the hash of its text: two probes of one interpreter
    # never answer for each other, and a changed probe (a contribkit upgrade) runs again.
    counter = tmp_path / "calls"
    stub = _stub_python(tmp_path, counter)
    cache = JsonCache(tmp_path / "cache", "probes")
    for _ in range(2):
        cached_probe(str(stub), "torch_info.py", cache, scrub=())
        cached_probe(str(stub), "torch_logs.py", cache, scrub=())
    assert len(counter.read_text().splitlines()) == 2
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 2


def test_interpreter_without_torch(bare_python: str) -> None:
    info = probe_torch(bare_python, scrub=())
    assert not info.torch and info.error and "torch" in info.error


def test_broken_interpreter_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not found"):
        probe_torch(str(tmp_path / "nope"), scrub=())
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'segfault' >&2\nexit 139\n")
    broken.chmod(0o755)
    with pytest.raises(BadInput, match="could not probe"):
        probe_torch(str(broken), scrub=())
    data = tmp_path / "data"
    data.write_text("#!/bin/sh\n")
    with pytest.raises(BadInput, match="is not executable"):
        probe_torch(str(data), scrub=())
    data.write_text("not a program\n")
    data.chmod(0o755)
    with pytest.raises(BadInput, match=r"could not run .*: Exec format error"):
        probe_torch(str(data), scrub=())


@pytest.mark.parametrize("key", ["", '["/usr/bin/python3", "op_info.py"]', "é ✓ 中文"])
def test_cache_names_are_hashlibs_sha256(tmp_path: Path, key: str) -> None:
    """The cache hashes keys with CPython's built-in SHA-256 (hashlib would load OpenSSL on every
    warm query): the digest, and so every document's file name, is hashlib's, so a cache written
    before finds its documents still."""
    import hashlib

    from contribkit.core.cache import sha256_hex

    assert sha256_hex(key) == hashlib.sha256(key.encode()).hexdigest()
    path = JsonCache(tmp_path, "kind").path(key)
    assert path.name == hashlib.sha256(key.encode()).hexdigest()[:32] + ".json"
