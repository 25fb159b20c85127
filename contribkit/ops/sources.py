"""Where ``contribkit op`` reads from: the fork's yaml or torch's packaged copy, the target torch's
facts (one probe, cached per interpreter and torch build), and the yaml indexes."""

from __future__ import annotations

from pathlib import Path

from contribkit.core.cache import JsonCache, cache_root
from contribkit.core.config import Settings
from contribkit.core.errors import BadInput
from contribkit.core.record import Record
from contribkit.core.workspace import NATIVE_IN_CHECKOUT, checkout_root
from contribkit.ops.index import YamlIndex, load_index
from contribkit.ops.model import Source, TorchFacts

DERIVATIVES_IN_CHECKOUT = "tools/autograd/derivatives.yaml"
NATIVE_PACKAGED = "packaged/ATen/native/native_functions.yaml"
DERIVATIVES_PACKAGED = "packaged/autograd/derivatives.yaml"
# Part of the facts' cache folder: bump it when op_info.py's answer changes shape or meaning, so
# that no cached answer of an older probe is read as a new one.
FACTS_VERSION = 1


class Sources(Record):
    """The two indexes, where they came from, the checkout (if any) and the torch facts."""

    source: Source
    native: YamlIndex
    derivatives: YamlIndex | None
    checkout: Path | None
    facts: TorchFacts | None
    torch_error: str | None


def probe_facts(python: str, settings: Settings, refresh: bool = False) -> dict[str, object]:
    """op_info.py's facts about ``python``'s torch: cached per interpreter and torch build."""
    from contribkit.run.probe import cached_probe

    cache = JsonCache(cache_root(settings), f"op-facts-{FACTS_VERSION}")
    return cached_probe(
        python, "op_info.py", cache, scrub=settings.get("scrub_env"), refresh=refresh
    )


def open_sources(
    python: str, settings: Settings, root: Path | None, *, with_derivatives: bool = True
) -> Sources:
    """The yaml of the checkout at ``root`` if it is one, else the target torch's packaged copy."""
    from contribkit.run.probe import install_torch_hint

    raw = probe_facts(python, settings)
    torch_error = str(raw["error"]) if "error" in raw else None
    facts = None if torch_error else TorchFacts.from_dict(dict(raw))
    checkout = checkout_root(root)
    if checkout is not None:
        kind, native = "checkout", checkout / NATIVE_IN_CHECKOUT
        derivatives: Path | None = checkout / DERIVATIVES_IN_CHECKOUT
    elif torch_error or not raw.get("torchgen_dir"):
        raise BadInput(
            f"no native_functions.yaml: not in a PyTorch checkout, and {python} has no torchgen"
            + (f" ({torch_error})" if torch_error else ""),
            hint="cd into your PyTorch fork, or " + install_torch_hint(python),
        )
    else:
        packaged = Path(str(raw["torchgen_dir"]))
        kind, native = "packaged", packaged / NATIVE_PACKAGED
        derivatives = packaged / DERIVATIVES_PACKAGED
    cache = JsonCache(cache_root(settings), "op-index")
    native_index = load_index(native, "native", cache)
    derivatives_index = None
    derivatives_status = "cached"
    if with_derivatives and derivatives is not None and derivatives.is_file():
        derivatives_index = load_index(derivatives, "derivatives", cache)
        derivatives_status = derivatives_index.status
    source = Source(
        kind=kind,
        native_functions=str(native),
        derivatives=str(derivatives) if derivatives_index else None,
        index="built" if "built" in (native_index.status, derivatives_status) else "cached",
    )
    return Sources(source, native_index, derivatives_index, checkout, facts, torch_error)
