"""Every single mutation of a JSON document, for the "any change is rejected" properties."""

from __future__ import annotations

import copy
import re
from typing import Any, Iterator

_HEX = re.compile(r"[0-9a-f]{32,64}")


def _nodes(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, path + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _nodes(child, path + (index,))


def _replace(document: Any, path: tuple, new: Any) -> Any:
    result = copy.deepcopy(document)
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
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


def mutations(document: dict) -> Iterator[tuple[str, dict]]:
    """(description, mutated document) for every single-step mutation."""
    for path, value in _nodes(document):
        where = "/" + "/".join(map(str, path))
        if isinstance(value, dict):
            for key in value:
                reduced = copy.deepcopy(value)
                del reduced[key]
                yield f"drop {where}/{key}", _replace(document, path, reduced) if path else reduced
                if key.upper() != key:
                    renamed = {(k.upper() if k == key else k): v for k, v in value.items()}
                    yield f"recase {where}/{key}", _replace(document, path, renamed) if path else renamed
            extended = {**copy.deepcopy(value), "unexpected_field": None}
            yield f"add key at {where}", _replace(document, path, extended) if path else extended
        elif isinstance(value, list):
            if len(value) >= 2 and value[0] != value[1]:
                swapped = copy.deepcopy(value)
                swapped[0], swapped[1] = swapped[1], swapped[0]
                yield f"swap first two of {where}", _replace(document, path, swapped)
            if value:
                yield f"drop last of {where}", _replace(document, path, copy.deepcopy(value[:-1]))
                yield f"duplicate first of {where}", _replace(document, path, copy.deepcopy(value + value[:1]))
            else:
                yield f"fill {where}", _replace(document, path, ["x"])
        if path and not isinstance(value, (dict, list)):
            for variant in _leaf_variants(value):
                if variant != value or type(variant) is not type(value):
                    yield f"change {where} to {variant!r:.40}", _replace(document, path, variant)
        if path and isinstance(value, (dict, list)):
            yield f"null {where}", _replace(document, path, None)
