"""The run record: what green and required mean, IO, and the matrix views (pure functions)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from contribkit.core.errors import BadInput
from contribkit.run import record as record_module
from contribkit.run.record import (
    Cell,
    Interpreter,
    RunRecord,
    evaluate,
    is_green,
    is_required,
    latest_record,
    markdown_matrix,
    matrix_rows,
    new_record_id,
    to_junit,
    write_record,
)


def cell(
    status: str,
    device: str = "cpu",
    kind: str = "repro",
    *,
    file: str = "repros/issue-1/repro.py",
    detail: str = "",
    exit_code: int | None = None,
    duration_s: float = 0.0,
    counts: record_module.TestCounts | None = None,
) -> Cell:
    made = Cell(
        file=file,
        kind=kind,
        device=device,
        interpreter=1,
        status=status,
        detail=detail,
        exit_code=exit_code,
        duration_s=duration_s,
        counts=counts,
    )
    made.required = is_required(made, ())
    return made


def record(cells: list[Cell], **kw: object) -> RunRecord:
    fields: dict[str, object] = {
        "id": new_record_id("a" * 40, datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)),
        "created": "2026-01-02T03:04:05+00:00",
        "head": "a" * 40,
        "branch": "fix/issue-1-x",
        "dirty": False,
        "diff_hash": "0" * 64,
        "expect": "not-reproduced",
        "devices": ["cpu", "cuda"],
        "require": [],
        "interpreters": [
            Interpreter(
                1,
                "/venv/bin/python",
                python_version="3.11.7",
                torch_version="2.13.0+cpu",
                git_version="cf30153c4c131c81",
            )
        ],
        "cells": cells,
        "files": {"repros/issue-1/repro.py": "f" * 64},
        "ok": True,
        "reason": "",
    }
    fields.update(kw)
    return RunRecord(**fields)  # type: ignore[arg-type]


def test_green_depends_on_kind_and_expectation() -> None:
    assert is_green(cell("NOT_REPRODUCED")) and not is_green(cell("REPRODUCED"))
    assert is_green(cell("REPRODUCED"), "reproduced") and not is_green(
        cell("NOT_REPRODUCED"), "reproduced"
    )
    assert is_green(cell("PASS", kind="device-test")) and not is_green(cell("SKIP", kind="pytest"))


def test_evaluate_like_tox() -> None:
    assert evaluate([]) == (False, "no cell ran")
    ok = [cell("NOT_REPRODUCED"), cell("NOT_AVAILABLE", "cuda", detail="no CUDA device")]
    assert evaluate(ok) == (True, "all required cells are green")
    skipped = [cell("SKIP", detail="n/a (the repro is cuda-only)"), cell("NOT_AVAILABLE", "cuda")]
    assert evaluate(skipped) == (
        False,
        "every cell was skipped or not available: nothing was checked",
    )
    red = [cell("REPRODUCED", detail="RuntimeError: boom"), cell("ERROR", "cuda", detail="x")]
    assert evaluate(red) == (
        False,
        "repros/issue-1/repro.py on cpu is REPRODUCED: RuntimeError: boom (and 1 more)",
    )
    required = Cell("t.py", "pytest", "cuda", 1, "NOT_AVAILABLE", "no CUDA device")
    required.required = is_required(required, ["cuda"])
    assert required.required and not evaluate([cell("NOT_REPRODUCED"), required])[0]


def test_write_and_latest(tmp_path: Path) -> None:
    assert latest_record(tmp_path) is None
    older = record([cell("NOT_REPRODUCED")])
    newer = record([cell("REPRODUCED")], id=new_record_id("b" * 40))
    write_record(tmp_path, older)
    path = write_record(tmp_path, newer)
    assert path.name == f"{newer.id}.json" and newer.id.endswith("-bbbbbbb")
    found = latest_record(tmp_path)
    assert found is not None and found[0] == path and found[1] == newer
    with pytest.raises(BadInput, match="already exists"):
        write_record(tmp_path, newer)  # records are never replaced


def test_unreadable_records_are_bad_input(tmp_path: Path) -> None:
    runs = tmp_path / ".contribkit/runs"
    runs.mkdir(parents=True)
    (runs / "20260101T000000.000000Z-aaaaaaa.json").write_text("{not json")
    with pytest.raises(BadInput, match="not a readable run record") as info:
        latest_record(tmp_path)
    assert info.value.hint and "contribkit run" in info.value.hint
    data = record([cell("PASS", kind="pytest")]).as_dict()
    for broken in (
        {**data, "schema": 99},
        {**data, "cells": [{**data["cells"][0], "status": "GREEN"}]},
    ):
        (runs / "20260101T000000.000000Z-aaaaaaa.json").write_text(json.dumps(broken))
        with pytest.raises(BadInput):
            latest_record(tmp_path)


def test_matrix_views() -> None:
    test_cell = cell(
        "FAIL",
        kind="device-test",
        file="test/test_x.py",
        exit_code=1,
        duration_s=1.25,
        counts=record_module.TestCounts(3, 2, 1, 0, 0),
        detail="TestXCPU::test_a_cpu: a|b",
    )
    rec = record(
        [
            cell("NOT_REPRODUCED", duration_s=0.5),
            cell("NOT_AVAILABLE", "cuda", detail="no CUDA device"),
            test_cell,
        ]
    )
    header, rows = matrix_rows(rec)
    assert header == ["file", "cpu", "cuda"]
    assert rows == [
        ["repros/issue-1/repro.py", "NOT_REPRODUCED 0.5s", "NOT_AVAILABLE no CUDA device"],
        ["test/test_x.py", "FAIL 1 failed, 2 passed 1.2s", "-"],
    ]
    md = markdown_matrix(rec)
    assert md.splitlines()[:2] == ["| file | cpu | cuda |", "|---|---|---|"]
    junit = to_junit(rec)
    assert 'failures="1"' in junit and 'skipped="1"' in junit and "a|b" in junit
