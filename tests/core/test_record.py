"""core/record: a record behaves as the dataclass it replaces (constructor, equality, hash,
repr, asdict), checked against real dataclasses with the same fields."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from contribkit.core.record import FrozenRecordError, Record, as_dict, field, field_names


class Pair(Record, frozen=True):
    key: str
    value: int


@dataclasses.dataclass(frozen=True)
class PairDC:
    key: str
    value: int


@dataclasses.dataclass
class Leaf:
    name: str
    sizes: list[int]


class Entry(Record):
    """A record holding records, a dataclass, lists, dicts and defaults."""

    KIND: ClassVar[str] = "entry"  # a class variable, not a field
    name: str
    pairs: list[Pair]
    leaf: Leaf | None = None
    tags: list[str] = field(default_factory=list)
    by_key: dict[str, list[Pair]] = field(default_factory=dict)


@dataclasses.dataclass
class EntryDC:
    name: str
    pairs: list[PairDC]
    leaf: Leaf | None = None
    tags: list[str] = dataclasses.field(default_factory=list)
    by_key: dict[str, list[PairDC]] = dataclasses.field(default_factory=dict)


class Indexed(Record):
    names: list[str]
    seen: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.seen = frozenset(self.names)


class Child(Entry):
    extra: int = 0


def test_constructor_positional_keyword_and_defaults() -> None:
    first = Entry("add", [Pair("CPU", 1)])
    assert (first.name, first.pairs, first.leaf, first.tags, first.by_key) == (
        "add",
        [Pair("CPU", 1)],
        None,
        [],
        {},
    )
    second = Entry(name="add", pairs=[], tags=["core"])
    assert second.tags == ["core"]
    assert Entry("a", []).tags is not Entry("b", []).tags  # a factory's value per instance
    assert field_names(Entry) == ("name", "pairs", "leaf", "tags", "by_key")
    assert field_names(Child) == ("name", "pairs", "leaf", "tags", "by_key", "extra")
    assert Child("x", [], extra=3).extra == 3


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "missing required argument: 'key'"),
        (("a",), {}, "missing required argument: 'value'"),
        (("a", 1, 2), {}, "takes 2 positional arguments but 3 were given"),
        (("a",), {"key": "b", "value": 1}, "multiple values for 'key'"),
        (("a", 1), {"colour": 2}, "unexpected keyword 'colour'"),
    ],
)
def test_constructor_refuses_what_a_dataclass_refuses(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        Pair(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # the dataclass twin refuses the same call
        PairDC(*args, **kwargs)  # type: ignore[arg-type]


def test_a_field_without_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'late' follows default argument"):

        class Bad(Record):
            early: int = 0
            late: str  # type: ignore[misc]


def test_equality_hash_and_frozen() -> None:
    assert Pair("CPU", 1) == Pair("CPU", 1)
    assert Pair("CPU", 1) != Pair("CPU", 2)
    assert Pair("CPU", 1) != PairDC("CPU", 1)  # another class is never equal
    assert len({Pair("CPU", 1), Pair("CPU", 1), Pair("CUDA", 1)}) == 2
    assert hash(Pair("CPU", 1)) == hash(("CPU", 1))
    pair = Pair("CPU", 1)
    with pytest.raises(FrozenRecordError, match="cannot assign to field 'key'"):
        pair.key = "CUDA"  # type: ignore[misc]
    with pytest.raises(FrozenRecordError, match="cannot delete field 'value'"):
        del pair.value
    entry = Entry("add", [])
    with pytest.raises(TypeError, match="unhashable"):
        hash(entry)
    entry.tags = ["changed"]  # a record that is not frozen is mutable
    assert entry == Entry("add", [], tags=["changed"])


def test_post_init_and_init_false() -> None:
    indexed = Indexed(["a", "b", "a"])
    assert indexed.seen == frozenset({"a", "b"})
    assert repr(indexed) == "Indexed(names=['a', 'b', 'a'])"  # repr=False is left out
    with pytest.raises(TypeError, match="unexpected keyword 'seen'"):
        Indexed([], seen=frozenset())  # type: ignore[call-arg]


def test_repr_and_as_dict_match_the_dataclass_twins() -> None:
    leaf = Leaf("x", [1, 2])
    record = Entry("add", [Pair("CPU", 1)], leaf, ["core"], {"k": [Pair("Meta", 2)]})
    twin = EntryDC("add", [PairDC("CPU", 1)], leaf, ["core"], {"k": [PairDC("Meta", 2)]})
    assert repr(record) == repr(twin).replace("EntryDC(", "Entry(").replace("PairDC(", "Pair(")
    assert as_dict(record) == dataclasses.asdict(twin)
    converted = as_dict(record)
    assert converted["leaf"] is not leaf and converted["leaf"] == {"name": "x", "sizes": [1, 2]}
    assert as_dict((Pair("a", 1), "b")) == ({"key": "a", "value": 1}, "b")
    assert Entry.KIND == "entry" and "KIND" not in field_names(Entry)
