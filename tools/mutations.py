"""Every way the builders and tests change a JSON document, in one place.

Two kinds of change live here:

- targeted edits for the named negative fixtures: ``setter`` (put a value at a
  path), ``deleter`` (drop the key at a path) and ``both`` (apply several edits
  in order). Each returns a ``Mutation``, a function that edits a document in
  place; the builders re-seal digests afterwards where the fixture needs it.
- ``mutations``: every single-step mutation of a document, for the "any one
  change is rejected" properties in the tests; ``mutation_recipes`` lists the
  same mutations unbuilt, so a test that draws one builds only that one.

Values are deep-copied on the way in, so one edit applied to several
documents never shares state between them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

Mutation = Callable[[Any], None]
Path = tuple[Any, ...]

_HEX = re.compile(r"[0-9a-f]{32,64}")


def walk(target: Any, path: Path) -> Any:
    """The value at ``path`` (keys and list indexes) inside ``target``."""
    for key in path:
        target = target[key]
    return target


def setter(*path_and_value: Any) -> Mutation:
    """Put a copy of the last argument at the path given by the others."""
    *path, value = path_and_value

    def change(target: Any) -> None:
        walk(target, tuple(path[:-1]))[path[-1]] = copy.deepcopy(value)

    return change


def deleter(*path: Any) -> Mutation:
    """Delete the key (or list item) at ``path``."""

    def change(target: Any) -> None:
        del walk(target, tuple(path[:-1]))[path[-1]]

    return change


def both(*changes: Mutation) -> Mutation:
    """Apply ``changes`` in order, as one edit."""

    def change(target: Any) -> None:
        for each in changes:
            each(target)

    return change


# -- every single-step mutation --------------------------------------------


def _nodes(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _nodes(child, path + (index,))


def _replace(document: Any, path: Path, new: Any) -> Any:
    result = copy.deepcopy(document)
    walk(result, path[:-1])[path[-1]] = new
    return result


def _at(document: dict, path: Path, make_value: Callable[[], Any]) -> Callable[[], Any]:
    """A recipe: the document with the value at ``path`` replaced by a fresh ``make_value()``."""
    if not path:
        return make_value
    return lambda: _replace(document, path, make_value())


def _leaf_variants(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value, int(value), str(value).lower(), None]
    if isinstance(value, int):
        return [value + 1, -value - 1, str(value), float(value), True, None]
    if isinstance(value, str):
        variants = [value + "x", value[:-1] if value else "x", 0, None, [value]]
        match = re.search(r"[a-f]", value) if _HEX.fullmatch(value) else None
        if match:  # uppercase one hex digit
            variants.append(value[: match.start()] + value[match.start()].upper() + value[match.start() + 1 :])
        return variants
    if value is None:
        return ["", 0, False, {}]
    return []


def _without(value: dict, key: str) -> dict:
    reduced = copy.deepcopy(value)
    del reduced[key]
    return reduced


def _recased(value: dict, key: str) -> dict:
    return {(k.upper() if k == key else k): copy.deepcopy(v) for k, v in value.items()}


def _swapped(value: list) -> list:
    swapped = copy.deepcopy(value)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    return swapped


def _object_recipes(document: dict, path: Path, where: str, value: dict) -> Iterator[tuple[str, Callable[[], Any]]]:
    for key in value:
        yield f"drop {where}/{key}", _at(document, path, partial(_without, value, key))
        if key.upper() != key:
            yield f"recase {where}/{key}", _at(document, path, partial(_recased, value, key))
    yield f"add key at {where}", _at(document, path, lambda: {**copy.deepcopy(value), "unexpected_field": None})


def _list_recipes(document: dict, path: Path, where: str, value: list) -> Iterator[tuple[str, Callable[[], Any]]]:
    if len(value) >= 2 and value[0] != value[1]:
        yield f"swap first two of {where}", _at(document, path, partial(_swapped, value))
    if value:
        yield f"drop last of {where}", _at(document, path, lambda: copy.deepcopy(value[:-1]))
        yield f"duplicate first of {where}", _at(document, path, lambda: copy.deepcopy(value + value[:1]))
    else:
        yield f"fill {where}", _at(document, path, lambda: ["x"])


def mutation_recipes(document: dict) -> list[tuple[str, Callable[[], dict]]]:
    """(description, recipe) for every single-step mutation; a recipe builds its mutated document when called.

    A property test draws one recipe and builds only that document, instead of
    deep-copying the document once for every mutation it will not use.
    """
    recipes: list[tuple[str, Callable[[], dict]]] = []
    for path, value in _nodes(document):
        where = "/" + "/".join(map(str, path))
        if isinstance(value, dict):
            recipes.extend(_object_recipes(document, path, where, value))
        elif isinstance(value, list):
            recipes.extend(_list_recipes(document, path, where, value))
        if path and not isinstance(value, (dict, list)):
            for variant in _leaf_variants(value):
                if variant != value or type(variant) is not type(value):
                    recipes.append(
                        (f"change {where} to {variant!r:.40}", _at(document, path, partial(copy.deepcopy, variant)))
                    )
        if path and isinstance(value, (dict, list)):
            recipes.append((f"null {where}", _at(document, path, lambda: None)))
    return recipes


def mutations(document: dict) -> Iterator[tuple[str, dict]]:
    """(description, mutated document) for every single-step mutation."""
    for description, recipe in mutation_recipes(document):
        yield description, recipe()
