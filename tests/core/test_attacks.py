"""Each attack of tests/attacks.py through each command that runs issue code: it fails under
bubblewrap, the attacks that do not depend on the sandbox fail without it too, and each works
when its code runs plainly (the self-check that keeps a broken attack from passing)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contribkit.core import sandbox
from tests.attacks import (
    ATTACKS,
    DEBUG_SCRIPT,
    Attack,
    Scene,
    cases,
    listening,
    make_scene,
    run_plainly,
    write_repro,
)

HAS_BWRAP = sandbox.available()[0] is not None
needs_bwrap = pytest.mark.skipif(
    not HAS_BWRAP, reason=f"no bubblewrap sandbox here: {sandbox.available()[1]}"
)


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    made = make_scene(tmp_path)
    with listening(made):
        yield made


def prepare(scene: Scene, attack: Attack) -> list[str]:
    """The repro folders (a second one for attacks on later legs); the debug script the user
    made earlier. Returns the folders, relative to the fork."""
    folders = ["repros/attack", *(["repros/attack2"] if attack.second_leg else [])]
    for rel in folders:
        write_repro(scene, scene.fork / rel, attack.body)
    (scene.repro / "debug_issue.sh").write_text(DEBUG_SCRIPT)
    return folders


def through(scene: Scene, attack: Attack, path: str, mode: str, cache: str) -> str:
    """Run the attack through ``path`` with the sandbox ``mode``; everything it printed or
    left in contribkit's files."""
    folders = prepare(scene, attack)
    env = {
        **os.environ,
        **scene.env,
        "CONTRIBKIT_RUN_SANDBOX": mode,
        "CONTRIBKIT_CACHE_DIR": cache,
    }
    script = str(scene.repro / "repro.py")
    ck = [sys.executable, "-m", "contribkit"]
    commands = {
        "run": [*ck, "run", "--json", *folders, "--devices", "cpu", "-j", "1"],
        "debug": [*ck, "debug", "-p", "graph-breaks", "-s", script, "--run", "--json"],
        "ablation": [*ck, "debug", "-p", "ablation", "-s", script, "--run", "--json"],
        "from-repro": [*ck, "test", "--from-repro", "repros/attack", "--dry-run"],
        "script": [sys.executable, script],
    }
    if path == "script" and mode == "none":  # as where bwrap cannot make a sandbox
        env["CONTRIBKIT_SANDBOX"] = "none"
    proc = subprocess.run(
        commands[path], cwd=scene.fork, env=env, capture_output=True, text=True, timeout=600
    )
    written = [p for p in (scene.fork / ".contribkit").rglob("*") if p.is_file()]
    written += list(scene.repro.glob("*.log"))
    logs = "".join(p.read_text(errors="replace") for p in written if not p.is_symlink())
    return "\n".join([proc.stdout, proc.stderr, logs])


def case_id(case: tuple[Attack, str]) -> str:
    return f"{case[0].name} via {case[1]}".replace(" ", "-")


@needs_bwrap
@pytest.mark.slow
@pytest.mark.parametrize("case", cases(with_sandbox=True), ids=case_id)
def test_the_attack_fails_under_bwrap(
    scene: Scene, case: tuple[Attack, str], shared_cache: str
) -> None:
    attack, path = case
    text = through(scene, attack, path, "bwrap", shared_cache)
    assert "NOT_REPRODUCED found:" in text, text[-3000:]  # the code ran to its end
    assert attack.worked(scene, text) == []


@pytest.mark.slow
@pytest.mark.parametrize("case", cases(with_sandbox=False), ids=case_id)
def test_the_attack_fails_without_a_sandbox(
    scene: Scene, case: tuple[Attack, str], shared_cache: str
) -> None:
    attack, path = case
    text = through(scene, attack, path, "none", shared_cache)
    assert "NOT_REPRODUCED found:" in text, text[-3000:]
    assert attack.worked(scene, text) == []


@pytest.mark.slow
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name.replace(" ", "-"))
def test_the_attack_works_when_run_plainly(scene: Scene, attack: Attack) -> None:
    """The self-check: the same code, run as plain Python with the user's environment, gets
    what it is after (and a link it plants is followed by a plain ``open``)."""
    prepare(scene, attack)
    text = run_plainly(scene, attack)
    if attack.plain_follow_up is not None:
        attack.plain_follow_up(scene)
    assert attack.worked(scene, text), text[-3000:]
