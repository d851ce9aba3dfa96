"""The strict shape checker every model uses, and the shared field types.

A model is a class whose annotations, in order, are its keys: every key is
required, no other key is allowed, and types are strict (``true`` is not
``1``, ``1`` is not ``"1"``, a list is not an object). The vocabulary is small
on purpose and each annotation maps to one rule:

=============================  ==============================================
``str`` ``int`` ``bool``       that JSON type exactly (a boolean is no integer)
``list[T]``                    an array whose every item is a ``T``
a ``Strict`` subclass          an object with exactly that model's keys
``Literal[...]``               one of the listed values, of the same JSON type
``T | None``                   ``null`` or a ``T``
``Annotated[T, Check(...)]``   a ``T`` that also satisfies the check
=============================  ==============================================

Anything else is refused when the class is defined, so a model cannot use a
type the checker would not enforce. The formats themselves are defined once
in evaluator/formats.py; the field types here bind each to its stable error
code. Messages for wrong types and values keep the wording the evaluator has
always published (references/errors.md); tests/test_model_checker.py checks
every verdict against a pydantic rendering of the same models.

Checking walks the parsed document once, collects every violation and builds
an instance only when there are none: an invalid object is never half-built.
"""

from collections.abc import Callable, Iterable, Iterator
from types import NoneType, UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from .. import formats
from ..errors import Violation, describe, pointer
from ..formats import Grammar, TimestampError, parse_timestamp


class Check:
    """A rule a value of the base type must also satisfy, with its stable error code.

    ``problem`` returns the message for a value that breaks the rule, else None.
    """

    def __init__(self, code: str, problem: Callable[[Any], str | None]):
        self.code = code
        self.problem = problem

    @classmethod
    def grammar(cls, code: str, grammar: Grammar) -> "Check":
        return cls(code, lambda value: None if grammar.matches(value) else f"{describe(value)} is not {grammar.what}")


Sha = Annotated[str, Check.grammar("invalid-sha", formats.SHA)]
Digest = Annotated[str, Check.grammar("invalid-digest", formats.DIGEST)]
RunId = Annotated[str, Check.grammar("invalid-run-id", formats.RUN_ID)]
DecimalId = Annotated[str, Check.grammar("invalid-id", formats.DECIMAL_ID)]
NodeId = Annotated[str, Check.grammar("invalid-node-id", formats.NODE_ID)]
RemoteName = Annotated[str, Check.grammar("invalid-remote-name", formats.REMOTE_NAME)]
Repository = Annotated[str, Check.grammar("invalid-repository", formats.REPOSITORY)]


def _timestamp_problem(value: str) -> str | None:
    try:
        parse_timestamp(value)
    except TimestampError as error:
        if error.reason == "shape":
            return f"{describe(value)} is not ISO-8601 with an explicit offset"
        return f"{describe(value)} is not a real date and time (a day from either end of the calendar)"
    return None


Timestamp = Annotated[str, Check("invalid-timestamp", _timestamp_problem)]
PositiveInt = Annotated[int, Check("not-positive", lambda v: None if v >= 1 else f"{v} is not a positive integer")]
NonNegativeInt = Annotated[int, Check("negative-integer", lambda v: None if v >= 0 else f"{v} is negative")]


def _branch_problem(value: str) -> str | None:
    problem = formats.branch_name_problem(value)
    return f"branch name {describe(value)} {problem}" if problem else None


def _path_problem(value: str) -> str | None:
    problem = formats.path_problem(value)
    return f"path {describe(value)} {problem}" if problem else None


BranchName = Annotated[str, Check("invalid-branch-name", _branch_problem)]
RepoPath = Annotated[str, Check("invalid-path", _path_problem)]


# --- the checker ---------------------------------------------------------------

Location = tuple[object, ...]
Found = list[tuple[Location, str, str]]  # (where under the checked value, code, message)


class _Invalid:
    """What a rule returns for a value it rejected (after recording why)."""


INVALID: Any = _Invalid()


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


def _wrong_type(found: Found, at: Location, expected: str, value: Any) -> Any:
    found.append((at, "wrong-type", f"Input should be {expected}; observed {json_type(value)}"))
    return INVALID


# A rule checks one value at ``at``, records what is wrong in ``found`` and
# returns the checked value (a model instance for an object) or INVALID.
Rule = Callable[[Any, Location, Found], Any]


def _exact_type(kind: type, expected: str) -> Rule:
    def rule(value: Any, at: Location, found: Found) -> Any:
        # ``type() is``: a bool is an int subclass, and never an integer here.
        return value if type(value) is kind else _wrong_type(found, at, expected, value)

    return rule


_BASE_RULES: dict[Any, Rule] = {
    str: _exact_type(str, "a valid string"),
    int: _exact_type(int, "a valid integer"),
    bool: _exact_type(bool, "a valid boolean"),
}


def _checked(base: Rule, check: Check) -> Rule:
    def rule(value: Any, at: Location, found: Found) -> Any:
        value = base(value, at, found)
        if value is INVALID:
            return INVALID
        problem = check.problem(value)
        if problem is not None:
            found.append((at, check.code, problem))
            return INVALID
        return value

    return rule


def _items(item: Rule) -> Rule:
    def rule(value: Any, at: Location, found: Found) -> Any:
        if type(value) is not list:
            return _wrong_type(found, at, "a valid list", value)
        known_problems = len(found)
        checked = [item(element, (*at, index), found) for index, element in enumerate(value)]
        return INVALID if len(found) > known_problems else checked

    return rule


def _nullable(inner: Rule) -> Rule:
    def rule(value: Any, at: Location, found: Found) -> Any:
        return None if value is None else inner(value, at, found)

    return rule


def _one_of(choices: tuple[Any, ...]) -> Rule:
    words = [repr(choice) for choice in choices]
    expected = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"

    def rule(value: Any, at: Location, found: Found) -> Any:
        # Compared with their type: ``true == 1`` in Python, but not in JSON.
        if any(type(value) is type(choice) and value == choice for choice in choices):
            return value
        found.append((at, "invalid-value", f"Input should be {expected}"))
        return INVALID

    return rule


def rule_for(annotation: Any, where: str) -> Rule:
    """The rule an annotation stands for; TypeError for one outside the vocabulary."""
    origin = get_origin(annotation)
    if annotation in _BASE_RULES:
        return _BASE_RULES[annotation]
    if isinstance(annotation, type) and issubclass(annotation, Strict) and annotation is not Strict:
        return annotation._check
    if origin is Annotated:
        base, *marks = get_args(annotation)
        if len(marks) != 1 or not isinstance(marks[0], Check):
            raise TypeError(f"{where}: Annotated takes one Check")
        return _checked(rule_for(base, where), marks[0])
    if origin is list:
        (item,) = get_args(annotation)
        return _items(rule_for(item, where))
    if origin is UnionType or origin is Union:  # ``str | None``; ``Annotated[...] | None``
        members = get_args(annotation)
        if len(members) != 2 or members[1] is not NoneType:
            raise TypeError(f"{where}: a union is only ever ``T | None``")
        return _nullable(rule_for(members[0], where))
    if origin is Literal:
        choices = get_args(annotation)
        if all(type(choice) in (str, int) for choice in choices):
            return _one_of(choices)
    raise TypeError(f"{where}: {annotation!r} is not a type the model checker knows")


class Strict:
    """Base of every model: exact keys in declaration order, strict types, frozen instances."""

    field_names: ClassVar[tuple[str, ...]] = ()
    _rules: ClassVar[tuple[tuple[str, Rule], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__bases__ != (Strict,):
            raise TypeError(f"{cls.__name__}: a model derives from Strict directly (its keys are its own)")
        # The class's own annotations (from Python 3.14 on they are evaluated
        # when read, not kept in the class dict); a class declaring none would
        # read Strict's here on older versions.
        annotations = cls.__annotations__
        if not annotations or annotations is Strict.__annotations__:
            raise TypeError(f"{cls.__name__}: a model declares its keys")
        cls._rules = tuple(
            (name, rule_for(annotation, f"{cls.__name__}.{name}")) for name, annotation in annotations.items()
        )
        cls.field_names = tuple(name for name, _ in cls._rules)

    @classmethod
    def _check(cls, value: Any, at: Location, found: Found) -> Any:
        if type(value) is not dict:
            return _wrong_type(found, at, f"a valid dictionary or instance of {cls.__name__}", value)
        known_problems = len(found)
        checked: dict[str, Any] = {}
        for name, rule in cls._rules:
            if name in value:
                checked[name] = rule(value[name], (*at, name), found)
            else:
                found.append(((*at, name), "missing-key", f"required key {name!r} is missing"))
        for key in value:
            if key not in cls.field_names:
                found.append(((*at, key), "unknown-key", f"key {key!r} is not part of the schema"))
        if len(found) > known_problems:  # a key missing or unknown, or a value rejected
            return INVALID
        instance = object.__new__(cls)
        instance.__dict__.update(checked)
        return instance

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in self._fields())})"

    def _fields(self) -> Iterator[tuple[str, Any]]:
        return ((name, self.__dict__[name]) for name in self.field_names)

    def _values(self) -> Iterator[Any]:
        return (value for _, value in self._fields())

    def as_dict(self) -> dict[str, Any]:
        """The instance as the JSON object it was checked from (keys in declaration order)."""
        return {name: _plain(value) for name, value in self._fields()}


def _plain(value: Any) -> Any:
    if isinstance(value, Strict):
        return value.as_dict()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def validate(model: type[Strict], value: Any, base: Iterable[object] = ()) -> tuple[Any, list[Violation]]:
    """(instance, []) or (None, violations): an invalid object is never half-built."""
    found: Found = []
    instance = model._check(value, (), found)
    if instance is INVALID:
        prefix = tuple(base)
        return None, [Violation(code, pointer(*prefix, *at), message) for at, code, message in found]
    return instance, []
