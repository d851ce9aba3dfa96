"""Every way the builders and tests change a JSON document, in one place.

Two kinds of change live here:

- targeted edits for the named negative fixtures: ``setter`` (put a value at a
  path), ``deleter`` (drop the key at a path) and ``both`` (apply several edits
  in order). Each returns a ``Mutation``, a function that edits a document in
  place; the builders re-seal digests afterwards where the fixture needs it.
- ``mutations``: every single-step mutation of a document, for the "any one
  change is rejected" properties in the tests.

Values are deep-copied on the way in, so one edit applied to several
documents never shares state between them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
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


def _object_mutations(document: dict, path: Path, where: str, value: dict) -> Iterator[tuple[str, dict]]:
    for key in value:
        reduced = copy.deepcopy(value)
        del reduced[key]
        yield f"drop {where}/{key}", _replace(document, path, reduced) if path else reduced
        if key.upper() != key:
            renamed = {(k.upper() if k == key else k): v for k, v in value.items()}
            yield f"recase {where}/{key}", _replace(document, path, renamed) if path else renamed
    extended = {**copy.deepcopy(value), "unexpected_field": None}
    yield f"add key at {where}", _replace(document, path, extended) if path else extended


def _list_mutations(document: dict, path: Path, where: str, value: list) -> Iterator[tuple[str, dict]]:
    if len(value) >= 2 and value[0] != value[1]:
        swapped = copy.deepcopy(value)
        swapped[0], swapped[1] = swapped[1], swapped[0]
        yield f"swap first two of {where}", _replace(document, path, swapped)
    if value:
        yield f"drop last of {where}", _replace(document, path, copy.deepcopy(value[:-1]))
        yield f"duplicate first of {where}", _replace(document, path, copy.deepcopy(value + value[:1]))
    else:
        yield f"fill {where}", _replace(document, path, ["x"])


def mutations(document: dict) -> Iterator[tuple[str, dict]]:
    """(description, mutated document) for every single-step mutation."""
    for path, value in _nodes(document):
        where = "/" + "/".join(map(str, path))
        if isinstance(value, dict):
            yield from _object_mutations(document, path, where, value)
        elif isinstance(value, list):
            yield from _list_mutations(document, path, where, value)
        if path and not isinstance(value, (dict, list)):
            for variant in _leaf_variants(value):
                if variant != value or type(variant) is not type(value):
                    yield f"change {where} to {variant!r:.40}", _replace(document, path, variant)
        if path and isinstance(value, (dict, list)):
            yield f"null {where}", _replace(document, path, None)
