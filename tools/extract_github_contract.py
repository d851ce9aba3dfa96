"""Extract the parts of GitHub's published API descriptions that the simulator must honour.

    python -m tools.extract_github_contract [--source DIR]

Fetches two pinned npm packages with ``npm pack`` (or reads their tarballs
from ``--source``) and writes, under simulator/contract/:

- ``rest-responses.json``: for every REST operation the simulator serves
  (``simulator.rest.Rest``), every documented response status with its JSON
  schema, taken from ``@octokit/openapi``'s dereferenced description of
  api.github.com. OpenAPI 3.0's ``nullable: true`` is rewritten as JSON
  Schema (a ``"null"`` type or an ``anyOf`` with null), and annotations
  (descriptions, examples) are dropped, so plain ``jsonschema`` validates.
- ``github.graphql``: the subset of ``@octokit/graphql-schema`` that the
  project's GraphQL documents touch: each type they select, with the fields
  they select (plus every field of an interface they use), every argument and
  input type of those fields, and the enums and scalars involved. The
  documents are the GraphQL strings found in the project's modules (observe/,
  and executor/ when present) plus simulator/contract/operations.graphql,
  which lists the operations the simulator also serves for writers.
  Each document must validate against the full published schema first.

Tests and the simulator read only the committed files, never the network.
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import pkgutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import graphql  # noqa: E402
from graphql import (  # noqa: E402
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLUnionType,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    get_named_type,
    parse,
    visit,
)

OPENAPI_PACKAGE = "@octokit/openapi@23.0.2"
GRAPHQL_PACKAGE = "@octokit/graphql-schema@15.26.1"
CONTRACT = ROOT / "simulator" / "contract"
DOCUMENT_PACKAGES = ("observe", "executor")
OPENAPI_MEMBER = "package/generated/api.github.com.deref.json"
GRAPHQL_MEMBER = "package/schema.json"

# JSON Schema keywords kept from OpenAPI schema objects; everything else is annotation.
_KEYWORDS = {
    "type",
    "enum",
    "required",
    "properties",
    "items",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "uniqueItems",
    "nullable",
    "const",
}


# -- fetching ------------------------------------------------------------------


def tarball(package: str, source: Path | None, scratch: Path) -> Path:
    name = package.rsplit("@", 1)[0].lstrip("@").replace("/", "-") + "-" + package.rsplit("@", 1)[1] + ".tgz"
    if source is not None:
        return source / name
    subprocess.run(["npm", "pack", "--silent", package], cwd=scratch, check=True, stdout=subprocess.DEVNULL)
    return scratch / name


def member(path: Path, name: str) -> bytes:
    with tarfile.open(path, "r:gz") as archive:
        handle = archive.extractfile(name)
        if handle is None:
            raise SystemExit(f"{path.name} has no {name}")
        return handle.read()


# -- REST ------------------------------------------------------------------------


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema object as JSON Schema (draft 2020-12 subset), annotations dropped."""
    if isinstance(node, bool) or not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _KEYWORDS or key == "nullable":
            continue
        if key == "properties":
            out[key] = {name: json_schema(child) for name, child in value.items()}
        elif key in ("items", "additionalProperties", "not"):
            out[key] = json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [json_schema(child) for child in value]
        else:
            out[key] = value
    if node.get("nullable") is True:
        if "type" in out:
            out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else [*out["type"], "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def rest_contract(spec: dict[str, Any], operations: list[tuple[str, str]]) -> dict[str, Any]:
    extracted: dict[str, Any] = {}
    for method, template in operations:
        operation = spec["paths"].get(template, {}).get(method.lower())
        if operation is None:
            raise SystemExit(f"{method} {template} is not in the published description")
        responses: dict[str, Any] = {}
        for status, response in sorted(operation["responses"].items()):
            content = (response.get("content") or {}).get("application/json")
            responses[status] = json_schema(content["schema"]) if content and "schema" in content else None
        extracted[f"{method} {template}"] = {"operationId": operation["operationId"], "responses": responses}
    return extracted


# -- GraphQL -----------------------------------------------------------------------


def project_documents() -> dict[str, str]:
    """Every module-level string in the project's packages that parses as a GraphQL operation."""
    found: dict[str, str] = {}
    for package_name in DOCUMENT_PACKAGES:
        if not (ROOT / package_name).is_dir():
            continue
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            module = importlib.import_module(info.name)
            for attribute, value in vars(module).items():
                if isinstance(value, str) and value.lstrip().startswith(("query", "mutation")) and is_operation(value):
                    found[f"{info.name}.{attribute}"] = value
    operations = CONTRACT / "operations.graphql"
    if operations.is_file():
        found["simulator/contract/operations.graphql"] = operations.read_text(encoding="utf-8")
    return found


def is_operation(text: str) -> bool:
    try:
        document = parse(text)
    except graphql.GraphQLError:
        return False
    return any(isinstance(d, graphql.OperationDefinitionNode) for d in document.definitions)


def validate_documents(schema: GraphQLSchema, documents: dict[str, str]) -> None:
    for name, text in documents.items():
        errors = graphql.validate(schema, parse(text))
        if errors:
            raise SystemExit(f"{name} does not validate against the published schema: {errors[0].message}")


def used_fields(schema: GraphQLSchema, documents: dict[str, str]) -> dict[str, set[str]]:
    """Type name -> the field names the documents select on it (types used only by name get an empty set)."""
    used: dict[str, set[str]] = {}
    type_info = TypeInfo(schema)

    class Collector(Visitor):
        def enter_field(self, node: Any, *_: Any) -> None:
            parent = type_info.get_parent_type()
            if parent is not None and not node.name.value.startswith("__"):
                used.setdefault(parent.name, set()).add(node.name.value)

        def enter_inline_fragment(self, node: Any, *_: Any) -> None:
            if node.type_condition is not None:
                used.setdefault(node.type_condition.name.value, set())

        def enter_named_type(self, node: Any, *_: Any) -> None:
            used.setdefault(node.name.value, set())

    for text in documents.values():
        visit(parse(text), TypeInfoVisitor(type_info, Collector()))
    return used


def subset_sdl(schema: GraphQLSchema, used: dict[str, set[str]]) -> str:
    keep: dict[str, set[str] | None] = {}  # None: keep every field
    for name, fields in used.items():
        named_type = schema.get_type(name)
        assert named_type is not None, name  # the documents validated against this schema
        _want(keep, named_type, fields)
    while _widen(schema, keep):
        pass
    return render_sdl(schema, keep)


def _want(keep: dict[str, set[str] | None], named: GraphQLNamedType, fields: set[str] | None = None) -> None:
    """Keep ``named`` (with ``fields``, if it has fields) and every type an input object needs."""
    if named.name.startswith("__"):
        return
    if named.name not in keep:
        keep[named.name] = set() if isinstance(named, (GraphQLObjectType, GraphQLInterfaceType)) else None
        if isinstance(named, GraphQLInterfaceType):
            keep[named.name] = None
        if isinstance(named, GraphQLInputObjectType):
            for field in named.fields.values():
                _want(keep, get_named_type(field.type))
    current = keep[named.name]
    if fields and current is not None:
        current.update(fields)


def _widen(schema: GraphQLSchema, keep: dict[str, set[str] | None]) -> bool:
    """One pass adding interface fields and the types kept fields and arguments name; True if ``keep`` grew."""
    changed = False
    for name in list(keep):
        named = schema.get_type(name)
        if not isinstance(named, (GraphQLObjectType, GraphQLInterfaceType)):
            continue
        kept = keep[name]
        names = set(named.fields) if kept is None else set(kept)
        for interface in named.interfaces:
            if interface.name in keep:
                names |= set(interface.fields)  # an implementation carries its interfaces' fields
        if kept is not None and names != kept:
            keep[name] = names
            changed = True
        for field_name in names:
            field = named.fields[field_name]
            targets = [get_named_type(field.type)] + [get_named_type(a.type) for a in field.args.values()]
            for target in targets:
                if target.name not in keep:
                    _want(keep, target)
                    changed = True
    return changed


def render_sdl(schema: GraphQLSchema, keep: dict[str, set[str] | None]) -> str:
    assert schema.query_type is not None and schema.mutation_type is not None
    blocks = [f"schema {{\n  query: {schema.query_type.name}\n  mutation: {schema.mutation_type.name}\n}}"]
    for name in sorted(keep):
        block = _sdl_block(name, schema.get_type(name), keep)
        if block is not None:
            blocks.append(block)
    return "\n\n".join(blocks) + "\n"


def _sdl_block(name: str, named: Any, keep: dict[str, set[str] | None]) -> str | None:
    """The SDL of one kept type; None for a built-in scalar (or a type of no known kind)."""
    if isinstance(named, GraphQLScalarType):
        return None if name in ("String", "Int", "Float", "Boolean", "ID") else f"scalar {name}"
    if isinstance(named, GraphQLEnumType):
        values = [f"  {value}" for value in named.values]
        return f"enum {name} {{\n" + "\n".join(values) + "\n}"
    if isinstance(named, GraphQLUnionType):
        members = [t.name for t in named.types if t.name in keep]
        return f"union {name} = " + " | ".join(members)
    if isinstance(named, GraphQLInputObjectType):
        lines = [f"  {n}: {f.type}" for n, f in sorted(named.fields.items())]
        return f"input {name} {{\n" + "\n".join(lines) + "\n}"
    if isinstance(named, (GraphQLObjectType, GraphQLInterfaceType)):
        kind = "interface" if isinstance(named, GraphQLInterfaceType) else "type"
        interfaces = [i.name for i in named.interfaces if i.name in keep]
        implements = (" implements " + " & ".join(interfaces)) if interfaces else ""
        return f"{kind} {name}{implements} {{\n" + "\n".join(_sdl_fields(named, keep[name])) + "\n}"
    return None


def _sdl_fields(named: Any, names: set[str] | None) -> list[str]:
    chosen = named.fields if names is None else {n: f for n, f in named.fields.items() if n in names}
    lines = []
    for name, field in sorted(chosen.items()):
        args = _sdl_arguments(field) if hasattr(field, "args") else ""
        reason = getattr(field, "deprecation_reason", None)
        deprecated = f" @deprecated(reason: {json.dumps(reason)})" if reason else ""
        lines.append(f"  {name}{args}: {field.type}{deprecated}")
    return lines


def _sdl_arguments(field: Any) -> str:
    if not field.args:
        return ""
    parts = []
    for name, argument in field.args.items():
        default = ""
        if argument.default_value is not graphql.Undefined:
            literal = graphql.ast_from_value(argument.default_value, argument.type)
            default = "" if literal is None else " = " + graphql.print_ast(literal)
        parts.append(f"{name}: {argument.type}{default}")
    return "(" + ", ".join(parts) + ")"


def published_schema(introspection: bytes) -> GraphQLSchema:
    data = json.loads(introspection)
    schema = graphql.build_client_schema(data.get("data", data))
    # The published schema breaks one newer consistency rule of graphql-core
    # (a deprecated implementation of a non-deprecated interface field); that
    # rule is about the schema, not about the documents checked against it.
    schema._validation_errors = []
    return schema


# -- main ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a folder holding the two npm tarballs (skips npm pack)")
    arguments = parser.parse_args(argv)
    from simulator.rest import Rest

    with tempfile.TemporaryDirectory() as scratch:
        openapi_tgz = tarball(OPENAPI_PACKAGE, arguments.source, Path(scratch))
        graphql_tgz = tarball(GRAPHQL_PACKAGE, arguments.source, Path(scratch))
        spec = json.load(io.BytesIO(member(openapi_tgz, OPENAPI_MEMBER)))
        schema = published_schema(member(graphql_tgz, GRAPHQL_MEMBER))

    operations = [(method, template) for method, template, _, _ in Rest(None).routes]  # type: ignore[arg-type]
    rest = {
        "source": {
            "package": OPENAPI_PACKAGE,
            "file": OPENAPI_MEMBER.removeprefix("package/"),
            "openapi": spec["openapi"],
            "note": "OpenAPI 3.0 schemas rewritten as JSON Schema: nullable -> null type, annotations dropped",
        },
        "operations": rest_contract(spec, operations),
    }
    CONTRACT.mkdir(parents=True, exist_ok=True)
    (CONTRACT / "rest-responses.json").write_text(json.dumps(rest, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    documents = project_documents()
    validate_documents(schema, documents)
    header = (
        f"# Subset of {GRAPHQL_PACKAGE} ({GRAPHQL_MEMBER.removeprefix('package/')})"
        " that the project's GraphQL documents use.\n"
        "# Generated by tools/extract_github_contract.py; do not edit.\n"
    )
    sdl = subset_sdl(schema, used_fields(schema, documents))
    graphql.build_schema(sdl)  # the subset must stand on its own
    (CONTRACT / "github.graphql").write_text(header + sdl, encoding="utf-8")
    print(f"{len(operations)} REST operations, {len(documents)} GraphQL documents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
