"""The pydantic base every model uses, and the shared field types.

A model is a pydantic model (strict, extra keys forbidden, frozen) whose
annotations, in order, are its keys: every key is required, no other key is
allowed, and types are strict (``true`` is not ``1``, ``1`` is not ``"1"``, a
list is not an object). The vocabulary is small on purpose and each
annotation maps to one rule:

=============================  ==============================================
``str`` ``int`` ``bool``       that JSON type exactly (a boolean is no integer)
``list[T]``                    an array whose every item is a ``T``
a ``Strict`` subclass          an object with exactly that model's keys
``Literal[...]``               one of the listed values, of the same JSON type
``T | None``                   ``null`` or a ``T``
``Annotated[T, Check(...)]``   a ``T`` that also satisfies the check
=============================  ==============================================

Anything else is refused when the class is defined, so a model cannot use a
type whose rule is not spelled out here. The formats themselves are defined
once in evaluator/formats.py; the field types here bind each to its stable
error code: a ``Check`` is a pydantic after-validator that raises its own code
with its own message. ``validate`` turns pydantic's errors into violations
worded as the evaluator has always published them (references/errors.md).

Every model is built lazily (``defer_build``): a check builds the validators
of the models its document needs, on first use, and no others.
pydantic builds no instance of an invalid object: it is never half-built.
"""

from collections.abc import Callable, Iterable
from types import NoneType, UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic_core import PydanticCustomError, PydanticKnownError, core_schema

from .. import formats
from ..errors import Violation, describe, pointer
from ..formats import Grammar, TimestampError, parse_timestamp


class Check:
    """A rule a value of the base type must also satisfy, with its stable error code.

    ``problem`` returns the message for a value that breaks the rule, else None.
    In an ``Annotated`` field type it is a pydantic after-validator: it runs
    once the base type is right and raises the code with that message.
    """

    def __init__(self, code: str, problem: Callable[[Any], str | None]):
        self.code = code
        self.problem = problem

    @classmethod
    def grammar(cls, code: str, grammar: Grammar) -> "Check":
        return cls(code, lambda value: None if grammar.matches(value) else f"{describe(value)} is not {grammar.what}")

    def __call__(self, value: Any) -> Any:
        problem = self.problem(value)
        if problem is not None:
            raise PydanticCustomError(self.code, problem)  # no context: the message is final
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, handler(source))


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


# --- the base model ---------------------------------------------------------------


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


class ExactChoice:
    """Makes a ``Literal`` compare its values with their JSON type.

    pydantic's literal takes ``true`` and ``1.0`` for ``1`` (equal in
    Python); in JSON neither is the integer 1. Runs before the literal's own
    check and fails the same way it would.
    """

    def __init__(self, choices: tuple[Any, ...]):
        self.choices = choices
        words = [repr(choice) for choice in choices]
        self.expected = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"

    def __call__(self, value: Any) -> Any:
        if any(type(value) is type(choice) and value == choice for choice in self.choices):
            return value
        raise PydanticKnownError("literal_error", {"expected": self.expected})

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(self, handler(source))


def pydantic_type(annotation: Any, where: str) -> Any:
    """The annotation pydantic validates for one of the vocabulary; TypeError for any other."""
    origin = get_origin(annotation)
    if annotation in (str, int, bool):
        return annotation
    if isinstance(annotation, type) and issubclass(annotation, Strict) and annotation is not Strict:
        return annotation
    if origin is Annotated:
        base, *marks = get_args(annotation)
        if len(marks) != 1 or not isinstance(marks[0], Check):
            raise TypeError(f"{where}: Annotated takes one Check")
        return Annotated[pydantic_type(base, where), marks[0]]
    if origin is list:
        (item,) = get_args(annotation)
        return list[pydantic_type(item, where)]  # type: ignore[misc]
    if origin is UnionType or origin is Union:  # ``str | None``; ``Annotated[...] | None``
        members = get_args(annotation)
        if len(members) != 2 or members[1] is not NoneType:
            raise TypeError(f"{where}: a union is only ever ``T | None``")
        return pydantic_type(members[0], where) | None
    if origin is Literal:
        choices = get_args(annotation)
        if all(type(choice) is str for choice in choices):
            return annotation  # a string literal: pydantic's strict check is already exact
        if all(type(choice) in (str, int) for choice in choices):
            return Annotated[annotation, ExactChoice(choices)]
    raise TypeError(f"{where}: {annotation!r} is not a type a model may declare")


class Strict(BaseModel):
    """Base of every model: exact keys in declaration order, strict types, frozen instances."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        defer_build=True,  # built on first use: a check builds only its own document's models
        revalidate_instances="never",
    )

    field_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Runs as the class is created, before pydantic reads its fields: each
        # annotation is checked against the vocabulary and replaced, in place,
        # by what pydantic is to validate for it.
        super().__init_subclass__(**kwargs)
        if cls.__bases__ != (Strict,):
            raise TypeError(f"{cls.__name__}: a model derives from Strict directly (its keys are its own)")
        annotations = cls.__annotations__
        if not annotations or annotations is Strict.__annotations__:
            raise TypeError(f"{cls.__name__}: a model declares its keys")
        for name, annotation in annotations.items():
            annotations[name] = pydantic_type(annotation, f"{cls.__name__}.{name}")
        cls.field_names = tuple(annotations)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def as_dict(self) -> dict[str, Any]:
        """The instance as the JSON object it was checked from (keys in declaration order)."""
        return self.model_dump()


def _violation(error: Any, base: tuple[object, ...]) -> Violation:
    """One pydantic error, worded as the evaluator words it (references/errors.md)."""
    kind, location = error["type"], error["loc"]
    at = pointer(*base, *location)
    if kind == "missing":
        return Violation("missing-key", at, f"required key {location[-1]!r} is missing")
    if kind == "extra_forbidden":
        return Violation("unknown-key", at, f"key {location[-1]!r} is not part of the schema")
    if kind.endswith("_type"):  # string_type, int_type, bool_type, list_type, model_type
        return Violation("wrong-type", at, f"{error['msg']}; observed {json_type(error['input'])}")
    if "-" in kind:  # a Check's own code is kebab-case
        return Violation(kind, at, error["msg"])
    return Violation("invalid-value", at, error["msg"])  # literal_error


def validate(model: type[Strict], value: Any, base: Iterable[object] = ()) -> tuple[Any, list[Violation]]:
    """(instance, []) or (None, violations): an invalid object is never half-built."""
    try:
        return model.model_validate(value), []
    except ValidationError as error:
        prefix = tuple(base)
        return None, [_violation(item, prefix) for item in error.errors(include_url=False, include_context=False)]
