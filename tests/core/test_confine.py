"""The lines of the README's Safety table that the attacks (tests/test_attacks.py) do not show:
limits, the private /tmp, GPU nodes, the platforms without a sandbox, the scratch folder, and a
repository's config that would weaken safety."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contribkit.core import sandbox
from contribkit.core.config import KEYS, load_settings
from contribkit.core.confine import leg_space, run_code
from contribkit.core.errors import BadInput
from contribkit.core.trust import trust
from contribkit.core.workspace import repros_path
from contribkit.target import reproconfine
from tests.attacks import CONFIG_ATTACKS, Scene, make_scene, write_repro

HAS_BWRAP = sandbox.available()[0] is not None
MODES = ["bwrap", "none"] if HAS_BWRAP else ["none"]
LIMITS = sandbox.Limits(memory_mb=3072, processes=64, file_size_mb=1)

SHOW_LIMITS = textwrap.dedent("""\
    import os
    limits = {line[:26].strip(): line[26:].split()[0] for line in open("/proc/self/limits")}
    print("LIMIT as", limits["Max address space"])
    print("LIMIT fsize", limits["Max file size"])
    print("LIMIT nproc", limits["Max processes"])
    st = os.statvfs("/tmp")
    print("TMP", st.f_blocks * st.f_frsize)
    try:
        with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as fh:
            fh.write(b"x" * 2 * 1024 * 1024)
        print("BIG written")
    except OSError as exc:
        print("BIG refused", exc.errno)
    print("HOME", os.environ["HOME"])
""")


@pytest.mark.skipif(sandbox.Limits().argv(gpu=False, namespace=False) == [], reason="no prlimit")
@pytest.mark.parametrize("mode", MODES)
def test_a_leg_runs_under_its_limits_in_a_scratch_folder_of_its_own(
    tmp_path: Path, mode: str
) -> None:
    chosen = sandbox.choose(mode, limits=LIMITS)
    with leg_space() as space:
        result = run_code(
            [sys.executable, "-c", SHOW_LIMITS],
            space=space,
            sandbox=chosen,
            python=sys.executable,
            readable=(tmp_path,),
            cwd=tmp_path,
            timeout=120,
        )
        scratch = space.scratch
    out = result.output
    assert f"LIMIT as {3072 * 1024 * 1024}" in out, out
    assert f"LIMIT fsize {1024 * 1024}" in out and "BIG refused 27" in out  # EFBIG
    assert f"HOME {scratch}/home" in out and not scratch.exists()  # removed after
    if mode == "bwrap":  # processes are counted in the sandbox's own user namespace
        assert "LIMIT nproc 64" in out and f"TMP {sandbox.TMP_SIZE}" in out
    else:
        assert "LIMIT nproc 64" not in out


def test_a_gpu_leg_gets_the_device_nodes_and_sys_and_no_address_space_limit(
    tmp_path: Path,
) -> None:
    chosen = sandbox.Sandbox("bwrap", "test", "bwrap", limits=LIMITS)
    gpu = sandbox.Confinement(chosen, python=sys.executable, gpu=True)
    cpu = sandbox.Confinement(chosen, python=sys.executable)
    gpu_args = sandbox.bwrap_command(gpu, ["true"], dict(os.environ), tmp_path)
    cpu_args = sandbox.bwrap_command(cpu, ["true"], dict(os.environ), tmp_path)
    for node in sandbox.gpu_nodes():
        assert node in gpu_args and node not in cpu_args
    assert "/sys" in gpu_args and "/sys" not in cpu_args
    assert "/usr" in cpu_args  # the driver's libraries live under it
    assert not any(a.startswith("--as=") for a in LIMITS.argv(gpu=True, namespace=True))


def test_macos_and_other_systems_have_no_sandbox_and_no_limits_but_wall_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    sandbox._prlimit.cache_clear()
    try:
        assert reproconfine.bwrap_available() == (
            None,
            "bubblewrap needs Linux, and this is darwin",
        )
        assert sandbox.Limits().argv(gpu=False, namespace=False) == []
        assert reproconfine.hide_environ() is False and reproconfine.become_subreaper() is False
    finally:
        sandbox._prlimit.cache_clear()


@pytest.mark.slow
def test_a_repro_run_directly_says_in_one_line_that_it_cannot_confine(tmp_path: Path) -> None:
    scene = make_scene(tmp_path)
    script = write_repro(scene, scene.repro, "grab(os.environ.get('GH_TOKEN'))\n")
    env = {**os.environ, **scene.env, "PATH": "/nonexistent"}  # no bwrap to be found
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=scene.fork, env=env, capture_output=True, text=True
    )
    notes = [line for line in proc.stderr.splitlines() if "no sandbox" in line]
    assert notes == [
        "contribkit: no sandbox: bubblewrap (bwrap) is not installed; the issue's code runs "
        "unconfined, with a scrubbed environment"
    ]
    assert "NOT_REPRODUCED found: " in proc.stdout and scene.leaked(proc.stdout) == []


# -- a repository's own config -----------------------------------------------------------------
def repo_file(root: Path, key: str, value: str) -> Path:
    section, _, name = key.rpartition(".")
    text = f"[{section}]\n{name} = {value}\n" if section else f"{name} = {value}\n"
    path = root / ".contribkit.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("key", sorted(CONFIG_ATTACKS))
def test_a_repository_config_key_that_weakens_safety_needs_trust(tmp_path: Path, key: str) -> None:
    path = repo_file(tmp_path, key, CONFIG_ATTACKS[key])
    settings = load_settings(repo_root=tmp_path, environ={})
    assert settings.get(key) == KEYS[key].default
    said = [w for w in settings.warnings if f"'{key}' ignored" in w]
    assert len(said) == 1 and "\n" not in said[0] and "contribkit config --trust" in said[0]
    trust(path)
    trusted = load_settings(repo_root=tmp_path, environ={})
    assert trusted.get(key) != KEYS[key].default and trusted.warnings == []


def test_values_that_keep_safety_need_no_trust(tmp_path: Path) -> None:
    for key, value in (("run.sandbox", '"bwrap"'), ("hooks.disable", "[]")):
        repo_file(tmp_path, key, value)
        settings = load_settings(repo_root=tmp_path, environ={})
        assert settings.warnings == [] and settings.sources[key].endswith(".contribkit.toml")


def test_repros_dir_stays_inside_the_repository_trusted_or_not(tmp_path: Path) -> None:
    scene: Scene = make_scene(tmp_path)
    (scene.fork / "out-link").symlink_to(tmp_path)
    for value in ('"../outside"', '"/tmp/elsewhere"', '"out-link/x"'):
        trust(repo_file(scene.fork, "repros_dir", value))
        settings = load_settings(repo_root=scene.fork, environ={})
        # a link on the way is named as one; a path that leaves the repository, as that
        with pytest.raises(BadInput, match=r"is outside the repository|is a symbolic link"):
            repros_path(scene.fork, settings)
    trust(repo_file(scene.fork, "repros_dir", '"test/repros"'))
    inside = repros_path(scene.fork, load_settings(repo_root=scene.fork, environ={}))
    assert inside == scene.fork / "test/repros"
