"""The evaluator's models rendered as pydantic models: for the schema builder and as a test oracle.

The evaluator checks documents with its own small checker
(evaluator/models/common.py). pydantic, outside the skill, still does two
jobs for the maintainers: ``tools/build_schemas.py`` publishes JSON Schemas
from these mirrors, and tests/test_model_checker.py checks that the checker
and pydantic give the same verdict, violation for violation, on the same
documents. A mirror has the model's name, keys, order and types; each
``Check`` becomes an ``AfterValidator`` raising the check's own code and
message, and ``mirror_violations`` maps pydantic's errors to violations the
way the evaluator words them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import PydanticCustomError

from evaluator.errors import Violation, pointer
from evaluator.models.common import Check, Strict, json_type


class _Mirror(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, revalidate_instances="never")


@functools.cache
def mirror(model: type[Strict]) -> type[BaseModel]:
    """The pydantic model with ``model``'s name, keys (in order) and types."""
    fields: dict[str, Any] = {name: (mirrored(annotation), ...) for name, annotation in model.__annotations__.items()}
    return create_model(model.__name__, __base__=_Mirror, __module__=model.__module__, __doc__=model.__doc__, **fields)


def mirrored(annotation: Any) -> Any:
    """An annotation of the checker's vocabulary, in pydantic's terms."""
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return mirror(annotation)
    origin = get_origin(annotation)
    if origin is Annotated:
        base, check = get_args(annotation)
        return Annotated[mirrored(base), AfterValidator(validator_of(check))]
    if origin is list:
        return list[mirrored(get_args(annotation)[0])]  # type: ignore[misc]
    if origin is UnionType or origin is Union:
        inner, none = get_args(annotation)
        assert none is NoneType, annotation
        return Optional[mirrored(inner)]  # noqa: UP045 (a runtime-built annotation)
    if origin is Literal or annotation in (str, int, bool):
        return annotation
    raise TypeError(f"{annotation!r} has no pydantic mirror")


@functools.cache
def validator_of(check: Check) -> Callable[[Any], Any]:
    """The check as an AfterValidator function; ``function.check`` is the check it runs."""

    def function(value: Any) -> Any:
        problem = check.problem(value)
        if problem is not None:
            raise PydanticCustomError(check.code, problem)  # no context: the message is final
        return value

    function.check = check  # type: ignore[attr-defined]
    return function


_TYPE_ERRORS = {"missing": "missing-key", "extra_forbidden": "unknown-key", "literal_error": "invalid-value"}


def _code(error_type: str) -> str:
    if error_type in _TYPE_ERRORS:
        return _TYPE_ERRORS[error_type]
    if error_type.endswith("_type"):
        return "wrong-type"
    if "-" in error_type:  # a Check's own code is kebab-case
        return error_type
    return "invalid-value"


def mirror_violations(model: type[Strict], value: Any, base: Iterable[object] = ()) -> list[Violation]:
    """What pydantic finds wrong with ``value`` as a ``model``, worded as the evaluator words it."""
    try:
        mirror(model).model_validate(value)
    except ValidationError as error:
        found = []
        for item in error.errors(include_url=False):
            code = _code(item["type"])
            path = pointer(*base, *item["loc"])
            if code == "missing-key":
                message = f"required key {item['loc'][-1]!r} is missing"
            elif code == "unknown-key":
                message = f"key {item['loc'][-1]!r} is not part of the schema"
            elif code == "wrong-type":
                message = f"{item['msg']}; observed {json_type(item['input'])}"
            else:
                message = item["msg"]
            found.append(Violation(code, path, message))
        return found
    return []
