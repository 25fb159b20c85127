"""Rendering and writing generated files, in copier's habits.

- Templates render in a ``SandboxedEnvironment`` with ``StrictUndefined``.
- Issue text is only ever a *value*, escaped for its target by a filter; it is never a template.
- A set of files is written all-or-nothing (:func:`~contribkit.core.fsutil.write_all`): every
  target is checked before the first write, a new folder appears whole or not at all, and
  nothing is replaced without ``force``. ``dry_run`` writes nothing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contribkit.core.datadirs import data_dir
from contribkit.core.errors import BadInput
from contribkit.core.fsutil import write_all

# Control characters (C0 but tab and newline, DEL, C1) and the bidirectional overrides, isolates
# and marks (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C): in a generated file they would
# hide or reorder what a reviewer reads ("Trojan Source"), so issue text gets them escaped
# (docstrings: ``\x9b``, ``\u202e``) or replaced (comments, one-line labels).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def docstring_text(value: Any) -> str:
    """Text that is safe inside a triple-double-quoted Python string and reads the same."""
    text = "" if value is None else str(value)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = _CONTROL.sub(_escape, text)
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    return text


def comment_text(value: Any) -> str:
    """Text as a block of ``#`` comment lines (for code kept but not run)."""
    text = "" if value is None else str(value).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(("# " + _CONTROL.sub("?", line)).rstrip() for line in text.split("\n"))


def one_line(value: Any) -> str:
    """Text on one line with control characters removed (for inline comments and labels)."""
    text = "" if value is None else str(value)
    # Printable text holds none of _CONTROL's characters and no whitespace but the space: when
    # no space is doubled or at an end, it is its own answer (a warning, a note).
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(_CONTROL.sub(" ", text).split())


def shell_quote(value: Any) -> str:
    return shlex.quote(str(value))


def printf_note(note: str) -> str:
    """A bash ``printf`` command printing ``note`` with {NAME} as the quoted value of $NAME."""
    parts = re.split(r"\{(\w+)\}", note)
    fmt = "".join(
        part.replace("\\", "\\\\").replace("%", "%%") if i % 2 == 0 else "%q"
        for i, part in enumerate(parts)
    )
    args = "".join(f' "${name}"' for name in parts[1::2])
    return f"printf {shlex.quote('  ' + fmt + chr(92) + 'n')}{args}"


def python_literal(value: Any) -> str:
    """A Python literal for plain data (str, numbers, bools, None, lists, tuples and dicts of
    them), with strings quoted as ruff format and black quote them, so formatting leaves them be."""
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(python_literal, value)) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(map(python_literal, value))
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        items = (f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    return repr(value)


def _string_literal(text: str) -> str:
    """Double quotes, unless they would need more escapes than single quotes (then repr's)."""
    if text.count('"') > text.count("'"):
        return repr(text)
    body = "".join('\\"' if c == '"' else "'" if c == "'" else repr(c)[1:-1] for c in text)
    return f'"{body}"'


def environment(trim_blocks: bool = True, bytecode_dir: Path | None = None) -> Any:
    """The sandboxed environment. ``trim_blocks`` also strips block indentation (set False for
    templates that control whitespace with ``{%-``); ``bytecode_dir`` caches compiled templates."""
    from jinja2 import FileSystemBytecodeCache, FileSystemLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    bytecode_cache = None
    if bytecode_dir is not None:
        try:
            bytecode_dir.mkdir(parents=True, exist_ok=True)
            bytecode_cache = FileSystemBytecodeCache(str(bytecode_dir))
        except OSError:  # an unwritable cache only costs the compile time
            bytecode_cache = None
    env = SandboxedEnvironment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=trim_blocks,
        lstrip_blocks=trim_blocks,
        bytecode_cache=bytecode_cache,
    )
    env.filters.update(
        docstring=docstring_text,
        comment=comment_text,
        oneline=one_line,
        pyrepr=python_literal,
        shq=shell_quote,
        printf_note=printf_note,
    )
    return env


def render(
    template: str, *, trim_blocks: bool = True, bytecode_dir: Path | None = None, **context: Any
) -> str:
    return str(environment(trim_blocks, bytecode_dir).get_template(template).render(**context))


def render_file(path: Path, *, trim_blocks: bool = True, **context: Any) -> str:
    """Render a user's template file (``--template FILE``) in the same sandbox.

    The file's text is compiled as a template of the sandboxed environment: it sees only the
    context, the filters above, and contribkit's own templates for ``{% include %}``. Any error
    in it is bad input (exit 2) naming the file and line.
    """
    import jinja2

    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read template {path}: {exc}") from exc
    names = ", ".join(sorted(context))
    try:
        template = environment(trim_blocks).from_string(source)
        return str(template.render(**context))
    except jinja2.TemplateSyntaxError as exc:
        raise BadInput(
            f"{path}:{exc.lineno}: template syntax error: {exc.message}",
            "see https://jinja.palletsprojects.com/en/stable/templates/",
        ) from exc
    except jinja2.UndefinedError as exc:
        raise BadInput(f"{path}: {exc.message}", f"the template can use: {names}") from exc
    except jinja2.TemplateError as exc:  # SecurityError from the sandbox, a missing include
        raise BadInput(f"{path}: {type(exc).__name__}: {exc}") from exc


@dataclass
class OutputFile:
    path: Path
    content: str
    mode: int | None = None


def write_outputs(
    files: list[OutputFile], *, force: bool = False, dry_run: bool = False
) -> dict[str, str]:
    """Write every file or none; return ``{path: "create" | "overwrite" | "exists"}``.

    Existing targets are refused up front unless ``force``; ``dry_run`` only reports.
    """
    plan = {
        str(f.path): ("overwrite" if force else "exists") if f.path.exists() else "create"
        for f in files
    }
    existing = [path for path, action in plan.items() if action == "exists"]
    if dry_run:
        return plan
    if existing:
        where = (
            existing[0]
            if len(existing) == 1
            else f"{Path(existing[0]).parent} ({len(existing)} files)"
        )
        raise BadInput(
            f"{where} already exists", "pass --force to overwrite, or -o to write elsewhere"
        )
    write_all([(f.path, f.content, f.mode) for f in files], force=True)
    return plan
