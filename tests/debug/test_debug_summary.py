"""Summarising a debug run's log. The fixtures are shaped like torch 2.13's log lines; the slow
tests in test_debug.py check the same parser on logs that real torch writes."""

from __future__ import annotations

from contribkit.debug.logsummary import split_records, summarise

P = "V0101 10:00:00.100000 4242 torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]"
P2 = "V0101 10:00:01.200000 4242 torch/_dynamo/symbolic_convert.py:5131] [0/1] [__graph_breaks]"
R = "V0101 10:00:01.100000 4242 torch/_dynamo/guards.py:5396] [0/1] [__recompiles]"
RV = "V0101 10:00:01.100000 4242 torch/_dynamo/guards.py:5394] [0/1] [__recompiles_verbose]"

GRAPH_BREAK = [
    f"{P} Graph break in user code at /work/model.py:12",
    f"{P} Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
    f"{P} ",
    f"{P} Unsupported Tensor.item() call",
    f"{P}   Explanation: Dynamo does not support tracing `Tensor.item()`.",
    f"{P}   Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`.",
    f"{P} ",
    f"{P}  For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html",
    f"{P} User code traceback:",
    f'{P}   File "/work/model.py", line 12, in forward',
    f"{P}     n = x.sum().item()",
]
DUPLICATE = [
    f"{P2} Graph break (user stack suppressed due to duplicate graph break) in user code at /work/model.py:12",
    f"{P2} Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
    f"{P2} ",
    f"{P2} Unsupported Tensor.item() call",
    f"{P2}   Explanation: Dynamo does not support tracing `Tensor.item()`.",
]
RECOMPILE = [
    f"{R} Recompiling function forward in /work/model.py:10",
    f"{R}     triggered by the following guard failure(s):",
    f"{R}     - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8   # n = x.sum()  # work/model.py:12 in forward",
]
RECOMPILE_VERBOSE = [
    f"{RV} Recompiling function forward in /work/model.py:10",
    f"{RV}     triggered by the following guard failure(s):",
    f"{RV}     guard 0 failures:",
    f"{RV}     - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8   # n = x.sum()  # work/model.py:12 in forward",
    f"{RV}     - User stack trace:",
    f'{RV}     -   File "/work/model.py", line 12, in forward',
]
CRASH = [
    "Traceback (most recent call last):",
    '  File "/work/model.py", line 20, in <module>',
    "    model(x)",
    "    ~~~~~^^^",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
    "RuntimeError: shape mismatch",
    "",
    "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace.",
]


def test_graph_breaks_are_deduplicated_with_counts_reasons_and_codes() -> None:
    lines = ["hello from the script", *GRAPH_BREAK, "more output", *DUPLICATE, *DUPLICATE]
    summary = summarise(lines, graph_breaks_logged=True, recompiles_logged=False)
    assert summary.graph_break_section.recognised
    [gb] = summary.graph_breaks
    assert gb.location == "/work/model.py:12"
    assert gb.reason == "Unsupported Tensor.item() call"
    assert gb.explanation == "Dynamo does not support tracing `Tensor.item()`."
    assert gb.code == "GB0124"
    assert gb.count == 3


def test_records_split_on_prefix_and_on_a_new_header() -> None:
    records, plain = split_records([*GRAPH_BREAK, *GRAPH_BREAK, "plain"])
    assert len(records) == 2 and plain == ["plain"]
    assert records[0].compile_id == "0/0" and records[0].artifact == "graph_breaks"


def test_recompiles_with_reasons_logged_once_per_compile_id() -> None:
    summary = summarise(
        [*RECOMPILE, *RECOMPILE_VERBOSE], graph_breaks_logged=False, recompiles_logged=True
    )
    [event] = summary.recompiles
    assert (event.function, event.location, event.compile_id) == (
        "forward",
        "/work/model.py:10",
        "0/1",
    )
    assert event.reasons == ["tensor 'x' size mismatch at index 0. expected 4, actual 8"]


def test_final_exception_verdict_and_artefacts() -> None:
    lines = [
        *CRASH,
        "I0101 10:00:02.000000 4242 torch/_inductor/graph.py:2693] [0/0] [__output_code] "
        "Output code written to: /tmp/torchinductor_me/ab/cabc.py",
        "Minifier script written to /work/dbg.debug/torch_compile_debug/run_1/minifier/minifier_launcher.py. Run this script",
        "contribkit-verdict: REPRODUCED RuntimeError: shape mismatch",
    ]
    summary = summarise(lines, graph_breaks_logged=True, recompiles_logged=True)
    assert summary.exception == (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: shape mismatch"
    )
    assert summary.verdict == ("REPRODUCED", "RuntimeError: shape mismatch")
    assert summary.artefacts == [
        ("generated code", "/tmp/torchinductor_me/ab/cabc.py"),
        (
            "minifier launcher",
            "/work/dbg.debug/torch_compile_debug/run_1/minifier/minifier_launcher.py",
        ),
    ]
    assert summary.graph_break_section.recognised and summary.graph_breaks == []


def test_torch_2_1_graph_break_format_is_read_too() -> None:
    pre = "V0101 10:00:00.100000 4242 torch/_dynamo/symbolic_convert.py:900] [0/0] [__graph_breaks]"
    lines = [
        f"{pre} Graph break: call_function BuiltinVariable(print) [ConstantVariable(str)] {{}} from user code at:",
        f'{pre}   File "/work/model.py", line 7, in forward',
        f"{pre}     print('hi')",
    ]
    [gb] = summarise(lines, graph_breaks_logged=True, recompiles_logged=False).graph_breaks
    assert gb.location == "/work/model.py:7" and gb.reason.startswith("call_function")


def test_unknown_format_is_reported_not_zero() -> None:
    changed = [f"{P} Dynamo split the graph at /work/model.py:12 because of Tensor.item()"]
    summary = summarise(changed, graph_breaks_logged=True, recompiles_logged=False)
    assert summary.graph_breaks == []
    assert not summary.graph_break_section.recognised
    assert "not recognised" in summary.graph_break_section.note
    # Lines in an unknown prefix format (e.g. a custom TORCH_LOGS_FORMAT) are noticed as well.
    custom = [
        "DEBUG: Graph break in user code at /work/model.py:12",
        "DEBUG: Recompiling function f",
    ]
    summary = summarise(custom, graph_breaks_logged=True, recompiles_logged=True)
    assert not summary.graph_break_section.recognised
    assert not summary.recompile_section.recognised
    # Dynamo's own count contradicts an empty parse.
    summary = summarise(
        ["nothing parsable"],
        graph_breaks_logged=True,
        recompiles_logged=False,
        dynamo={"graph_break_events": 2},
    )
    assert not summary.graph_break_section.recognised
    assert "Dynamo counted 2" in summary.graph_break_section.note


def test_the_scripts_own_words_are_not_taken_for_log_lines() -> None:
    lines = ["checking for a graph break here", "Recompiling function table"]
    summary = summarise(lines, graph_breaks_logged=True, recompiles_logged=False)
    assert summary.graph_break_section.recognised and summary.graph_breaks == []
    assert summary.recompile_section.recognised and not summary.recompile_section.logged


def test_not_logged_is_not_reported_as_none() -> None:
    summary = summarise(
        ["ok"],
        graph_breaks_logged=False,
        recompiles_logged=False,
        dynamo={"graph_break_events": 3},
    )
    assert not summary.graph_break_section.logged
    assert "--preset graph-breaks" in summary.graph_break_section.note
    data = summary.as_dict()
    assert data["graph_breaks"]["logged"] is False and data["recompiles"]["logged"] is False
