"""Records: typed, dataclass-like classes that cost nothing to create when their module loads.

``dataclasses`` writes each class's ``__init__``, ``__repr__`` and ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__`` and ``__hash__``) as source text and compiles it when the module
is imported: about 0.25 ms a class and 0.6 ms a frozen one on CPython 3.11. A warm
``contribkit op`` creates fourteen such classes, a third of what it costs beyond ``--help``.

A :class:`Record` subclass reads its fields once (its own annotations, in order, after its
bases') and shares one ``__init__``, ``__repr__`` and ``__eq__`` with every other record; type
checkers see a dataclass (PEP 681, ``dataclass_transform``). What it keeps of a dataclass: the
constructor (positional or keyword, defaults, :func:`field` with ``default_factory``,
``init=False`` and ``repr=False``, ``__post_init__``), equality of the same class field by field,
the repr, ``frozen=True`` (assignment raises, the record is hashable) and :func:`as_dict`, which
is ``dataclasses.asdict`` for records and the dataclasses they hold.

Use it for the types a warm path creates (``op``'s model, the workspace); dataclasses elsewhere.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import dataclass_transform  # typing's own from Python 3.11
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        """The type checker's mark; nothing at run time (typing has it from 3.11 only)."""
        return lambda cls: cls


class FrozenRecordError(AttributeError):
    """An assignment to a field of a frozen record (``dataclasses.FrozenInstanceError``'s twin)."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _Field:
    __slots__ = ("default", "default_factory", "init", "repr")

    def __init__(
        self, default: Any, default_factory: Callable[[], Any] | None, init: bool, repr: bool
    ) -> None:
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | None = None,
    init: bool = True,
    repr: bool = True,
) -> Any:
    """A field's options, as ``dataclasses.field`` takes them (those records support)."""
    if default is not MISSING and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, init, repr)


def _is_classvar(annotation: object) -> bool:
    # Under ``from __future__ import annotations`` every annotation is a string:
    # "ClassVar[int]", "typing.ClassVar[str]" are class variables, not fields.
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(field_specifiers=(field,))
class Record:
    """The base of a record: subclass it, annotate the fields (``frozen=True`` as a class
    keyword makes instances read-only and hashable)."""

    __record_fields__: ClassVar[dict[str, _Field]] = {}
    __record_frozen__: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls.__record_fields__)  # the bases' first, as dataclasses order them
        for name, annotation in inspect.get_annotations(cls).items():
            if _is_classvar(annotation):
                continue
            value = cls.__dict__.get(name, MISSING)
            spec = value if isinstance(value, _Field) else _Field(value, None, True, True)
            if isinstance(value, _Field):  # the class attribute is the default, as in dataclasses
                if spec.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            fields[name] = spec
        required_after_default = False
        for name, spec in fields.items():
            has_default = spec.default is not MISSING or spec.default_factory is not None
            if spec.init and not has_default and required_after_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            required_after_default |= spec.init and has_default
        cls.__record_fields__ = fields
        cls.__record_frozen__ = frozen or cls.__record_frozen__
        # eq without frozen makes a dataclass unhashable; frozen makes it hash by its fields
        # and refuse assignments (a plain record keeps object's own, fast __setattr__)
        setattr(cls, "__hash__", _hash if cls.__record_frozen__ else None)  # noqa: B010
        if cls.__record_frozen__:
            setattr(cls, "__setattr__", _frozen_setattr)  # noqa: B010
            setattr(cls, "__delattr__", _frozen_delattr)  # noqa: B010

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self.__record_fields__
        init = [name for name, spec in fields.items() if spec.init]
        if len(args) > len(init):
            raise TypeError(
                f"{type(self).__name__}() takes {len(init)} positional arguments but "
                f"{len(args)} were given"
            )
        values = dict(zip(init, args, strict=False))
        for name, value in kwargs.items():
            if name not in init:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__name__}() got multiple values for {name!r}")
            values[name] = value
        setter = object.__setattr__
        for name, spec in fields.items():
            if name in values:
                setter(self, name, values[name])
            elif spec.default_factory is not None:
                setter(self, name, spec.default_factory())
            elif spec.default is not MISSING:
                setter(self, name, spec.default)
            elif spec.init:
                raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__record_fields__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name, spec in self.__record_fields__.items()
            if spec.repr
        )
        return f"{type(self).__qualname__}({shown})"


def _hash(self: Record) -> int:
    return hash(self._values())


def _frozen_setattr(self: Record, name: str, value: Any) -> None:
    if name in self.__record_fields__:
        raise FrozenRecordError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Record, name: str) -> None:
    if name in self.__record_fields__:
        raise FrozenRecordError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def field_names(record: type[Record] | Record) -> tuple[str, ...]:
    """The fields of a record class or instance, in order (``dataclasses.fields``' names)."""
    return tuple(record.__record_fields__)


def as_dict(value: Any) -> Any:
    """``dataclasses.asdict`` for records: their fields by name, recursively through records,
    dataclasses, lists, tuples and dicts. Other values are returned as they are (records hold
    immutable leaves: strings, numbers, None)."""
    if isinstance(value, Record):
        return {name: as_dict(getattr(value, name)) for name in value.__record_fields__}
    if hasattr(type(value), "__dataclass_fields__"):
        import dataclasses  # only when a record holds a dataclass (op's findings and trace)

        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [as_dict(v) for v in value]
    if isinstance(value, tuple):
        return (
            type(value)(*map(as_dict, value))
            if hasattr(value, "_fields")
            else tuple(map(as_dict, value))
        )
    if isinstance(value, dict):
        return {as_dict(k): as_dict(v) for k, v in value.items()}
    return value
