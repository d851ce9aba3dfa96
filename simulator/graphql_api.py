"""GitHub's GraphQL endpoint over a World, executed by graphql-core.

The executable schema is simulator/contract/github.graphql, the subset of
GitHub's published schema that the project's documents use; a document that
selects anything else fails validation here as it would have to be added to
the contract first. Resolvers read and write the World; everything else
(aliases, fragments, ``__typename``) is graphql-core's.
"""

from __future__ import annotations

import base64
import binascii
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import graphql
from graphql import GraphQLError, GraphQLSchema

from simulator.world import ApiError, Repository, World, required_checks

SCHEMA_FILE = Path(__file__).resolve().parent / "contract" / "github.graphql"
PAGE_LIMIT = 100


class NotFound(GraphQLError):
    """A GitHub ``NOT_FOUND`` error (its ``type`` is carried into the answer)."""

    github_type = "NOT_FOUND"


class Forbidden(GraphQLError):
    """A GitHub ``FORBIDDEN`` error: the token may not make this mutation (its payload is null)."""

    github_type = "FORBIDDEN"


def require_write(info: Any, permission: str) -> None:
    """Refuse a mutation the token's permissions do not allow, as GitHub does (nothing changes)."""
    granted = info.context.get("permissions")
    if granted is not None and granted.get(permission) != "write":
        raise Forbidden(info.context["refusal"])


def cursor(offset: int) -> str:
    return base64.b64encode(f"cursor:v2:{offset}".encode()).decode()


def offset(value: str | None) -> int:
    if not value:
        return 0
    try:
        return int(base64.b64decode(value).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError, binascii.Error, UnicodeDecodeError) as error:
        raise GraphQLError(f"`{value}` does not appear to be a valid cursor.") from error


def page_size(first: int | None, last: int | None) -> int:
    if first is None:
        raise GraphQLError("You must provide a `first` or `last` value to properly paginate this connection.")
    if not 0 <= first <= PAGE_LIMIT:
        raise GraphQLError(
            f"Requesting {first} records on this connection exceeds the `first` limit of {PAGE_LIMIT} records."
        )
    return first


def connection(
    items: list[Any], first: int | None, after: str | None, last: int | None = None, *, drop_cursor: bool = False
) -> dict[str, Any]:
    size, start = page_size(first, last), offset(after)
    page = items[start : start + size]
    end = None if drop_cursor or not page else cursor(start + len(page))
    return {
        "totalCount": len(items),
        "pageInfo": {"hasNextPage": start + size < len(items), "endCursor": end},
        "nodes": page,
    }


def actor(user: dict[str, Any] | None) -> dict[str, Any] | None:
    """A REST account as a GraphQL Actor: a Bot's login loses its ``[bot]`` suffix."""
    if user is None:
        return None
    is_bot = user.get("type") == "Bot"
    login = user["login"].removesuffix("[bot]") if is_bot else user["login"]
    path = f"/apps/{login}" if is_bot else f"/{login}"
    return {
        "__typename": "Bot" if is_bot else "User",
        "login": login,
        "databaseId": user["id"],
        "id": user.get("node_id", ""),
        "avatarUrl": user.get("avatar_url", ""),
        "resourcePath": path,
        "url": f"https://github.com{path}",
    }


def review_comment(entry: dict[str, Any]) -> dict[str, Any]:
    """A thread entry (REST-backed, or a GraphQL-only record) as a PullRequestReviewComment."""
    rest = entry.get("rest")
    if rest is not None:
        edited = rest["updated_at"] if rest["updated_at"] != rest["created_at"] else None
        return {
            "__typename": "PullRequestReviewComment",
            "id": rest["node_id"],
            "databaseId": rest["id"],
            "body": rest["body"],
            "createdAt": rest["created_at"],
            "lastEditedAt": edited,
            "author": actor(rest["user"]),
        }
    return {
        "__typename": "PullRequestReviewComment",
        "id": entry["id"],
        "databaseId": entry.get("databaseId"),
        "body": entry["body"],
        "createdAt": entry["createdAt"],
        "lastEditedAt": entry.get("lastEditedAt"),
        "author": actor(entry.get("user")),
    }


def thread_node(thread: dict[str, Any]) -> dict[str, Any]:
    return {**thread, "__typename": "PullRequestReviewThread"}


def pull_node(world: World, repository: Repository, pull: dict[str, Any]) -> dict[str, Any]:
    world.refresh_pull(repository, pull)
    world.read_merge_state(repository, pull)
    state = "MERGED" if pull["merged"] else pull["state"].upper()
    node = {
        "__typename": "PullRequest",
        "id": pull["node_id"],
        "number": pull["number"],
        "isDraft": bool(pull["draft"]),
        "state": state,
        "headRefOid": pull["head"]["sha"],
        "headRefName": pull["head"]["ref"],
        "baseRefName": pull["base"]["ref"],
        "_repository": repository,
        "_number": pull["number"],
    }
    return {**node, **merge_verdicts(repository, pull)}


# -- merge state -----------------------------------------------------------------


def merge_verdicts(repository: Repository, pull: dict[str, Any]) -> dict[str, Any]:
    """GitHub's merge verdicts: the REST pull request's (``World.judge_merge``), then any the scenario set.

    The simulator does not judge reviews; a scenario states what GitHub
    decides (``Repository.merge_verdicts``), and without one a PR has no
    review decision, as on a branch without a review rule.
    """
    mergeable = {True: "MERGEABLE", False: "CONFLICTING"}.get(pull["mergeable"], "UNKNOWN")
    verdicts = {
        "mergeable": mergeable,
        "mergeStateStatus": str(pull["mergeable_state"]).upper(),
        "reviewDecision": None,
        "isMergeQueueEnabled": False,
        "isInMergeQueue": False,
        "statusCheckRollup": status_check_rollup(repository, pull["head"]["sha"], pull["base"]["ref"]),
    }
    verdicts.update(repository.merge_verdicts.get(pull["number"], {}))
    return verdicts


def status_check_rollup(repository: Repository, sha: str, base: str) -> dict[str, Any] | None:
    """The head commit's check runs and statuses; ``isRequired`` honours the app a requirement names."""
    required = required_checks(repository, base)
    contexts: list[dict[str, Any]] = []
    for run in repository.check_runs:
        if run["head_sha"] == sha:
            is_required = any(name == run["name"] and app in (None, run["app"]["id"]) for name, app in required)
            conclusion = run["conclusion"].upper() if run["conclusion"] else None
            contexts.append(
                {
                    "__typename": "CheckRun",
                    "id": run["node_id"],
                    "name": run["name"],
                    "status": run["status"].upper(),
                    "conclusion": conclusion,
                    "_required": is_required,
                }
            )
    for status in repository.statuses.get(sha, []):
        is_required = any(name == status["context"] and app is None for name, app in required)
        contexts.append(
            {
                "__typename": "StatusContext",
                "id": status["node_id"],
                "context": status["context"],
                "state": status["state"].upper(),
                "_required": is_required,
            }
        )
    if not contexts:
        return None
    return {
        "__typename": "StatusCheckRollup",
        "id": f"SCR_sim{sha}",
        "state": rollup_state(contexts),
        "_contexts": contexts,
    }


def rollup_state(contexts: list[dict[str, Any]]) -> str:
    def outcome(context: dict[str, Any]) -> str:
        if context["__typename"] == "StatusContext":
            return {"SUCCESS": "ok", "PENDING": "wait"}.get(context["state"], "bad")
        if context["status"] != "COMPLETED":
            return "wait"
        return "ok" if context["conclusion"] in ("SUCCESS", "NEUTRAL", "SKIPPED") else "bad"

    outcomes = {outcome(context) for context in contexts}
    return "FAILURE" if "bad" in outcomes else "PENDING" if "wait" in outcomes else "SUCCESS"


# (type name, field name) -> resolver, attached to the schema by executable_schema.
_RESOLVERS: dict[tuple[str, str], Any] = {}


def _resolver(type_name: str, field_name: str):
    def record(function):
        _RESOLVERS[(type_name, field_name)] = function
        return function

    return record


@_resolver("Query", "rateLimit")
def _resolve_rate_limit(_: Any, info: Any, dryRun: bool = False) -> dict[str, int]:  # noqa: N803 (GraphQL's name)
    window = info.context["rate"]
    return {"cost": info.context["cost"], "remaining": window.limit - window.used}


@_resolver("Query", "repository")
def _resolve_repository(_: Any, info: Any, owner: str, name: str, followRenames: bool = True) -> dict[str, Any]:  # noqa: N803
    try:
        found = info.context["world"].repository(owner, name)
    except ApiError:
        raise NotFound(f"Could not resolve to a Repository with the name '{owner}/{name}'.") from None
    return {"__typename": "Repository", "id": f"R_sim{found.id}", "_repository": found}


@_resolver("Repository", "pullRequest")
def _resolve_pull_request(source: dict[str, Any], info: Any, number: int) -> dict[str, Any]:
    found: Repository = source["_repository"]
    pull = found.pulls.get(number)
    if pull is None:
        raise NotFound(f"Could not resolve to a PullRequest with the number of {number}.")
    return pull_node(info.context["world"], found, pull)


@_resolver("PullRequest", "reviewThreads")
def _resolve_review_threads(
    source: dict[str, Any],
    info: Any,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    world: World = info.context["world"]
    threads = [thread_node(t) for t in source["_repository"].threads.get(source["_number"], [])]
    return connection(threads, first, after, last, drop_cursor=world.thread_page_drops_cursor)


def _count_only(items: list[Any], filters: dict[str, Any]) -> dict[str, int]:
    """A connection of which the contract selects only ``totalCount``; a filtered count is not simulated."""
    if any(value is not None for value in filters.values()):
        raise GraphQLError(f"the simulator counts this connection unfiltered only, not by {sorted(filters)}")
    return {"totalCount": len(items)}


@_resolver("PullRequest", "reviews")
def _resolve_reviews(
    source: dict[str, Any],
    info: Any,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
    author: str | None = None,
    states: list[str] | None = None,
) -> dict[str, int]:
    reviews = source["_repository"].reviews.get(source["_number"], [])
    return _count_only(reviews, {"author": author, "states": states})


@_resolver("PullRequest", "reactions")
def _resolve_reactions(
    source: dict[str, Any],
    info: Any,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
    content: str | None = None,
    orderBy: dict[str, Any] | None = None,  # noqa: N803 (GraphQL's name)
) -> dict[str, int]:
    reactions = source["_repository"].issue_reactions.get(source["_number"], [])
    return _count_only(reactions, {"content": content})


@_resolver("PullRequestReviewThread", "comments")
def _resolve_thread_comments(
    source: dict[str, Any],
    info: Any,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
    skip: int | None = None,
) -> dict[str, Any]:
    return connection([review_comment(entry) for entry in source["comments"]], first, after, last)


@_resolver("StatusCheckRollup", "contexts")
def _resolve_rollup_contexts(
    source: dict[str, Any],
    info: Any,
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
) -> dict[str, Any]:
    page = connection(source["_contexts"], first, after, last)
    override = info.context["world"].rollup_total_override
    return page if override is None else {**page, "totalCount": override}


def _resolve_is_required(
    source: dict[str, Any],
    info: Any,
    pullRequestId: str | None = None,  # noqa: N803 (GraphQL's names)
    pullRequestNumber: int | None = None,
) -> bool:
    return source["_required"]


for _context_type in ("CheckRun", "StatusContext"):
    _RESOLVERS[(_context_type, "isRequired")] = _resolve_is_required


@_resolver("Query", "node")
def _resolve_node(_: Any, info: Any, id: str) -> dict[str, Any]:  # noqa: A002 (GraphQL's name)
    found = find_node(info.context["world"], id)
    if found is None:
        raise NotFound(f"Could not resolve to a node with the global id of '{id}'")
    return found


@_resolver("Mutation", "resolveReviewThread")
def _resolve_resolve_thread(_: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    require_write(info, "pull_requests")
    return {"thread": thread_node(set_resolved(info, input["threadId"], True))}


@_resolver("Mutation", "unresolveReviewThread")
def _resolve_unresolve_thread(_: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    require_write(info, "pull_requests")
    return {"thread": thread_node(set_resolved(info, input["threadId"], False))}


@_resolver("Mutation", "markPullRequestReadyForReview")
def _resolve_mark_ready(_: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002
    require_write(info, "pull_requests")
    world: World = info.context["world"]
    found = find_node(world, input["pullRequestId"])
    if found is None or found["__typename"] != "PullRequest":
        raise NotFound(f"Could not resolve to a node with the global id of '{input['pullRequestId']}'")
    repository_found: Repository = found["_repository"]
    pull = world.mark_ready_for_review(repository_found.owner, repository_found.name, found["number"])
    return {"pullRequest": pull_node(world, repository_found, pull)}


@lru_cache(maxsize=1)
def executable_schema() -> GraphQLSchema:
    schema = graphql.build_schema(SCHEMA_FILE.read_text(encoding="utf-8"))
    for (type_name, field_name), function in _RESOLVERS.items():
        schema.get_type(type_name).fields[field_name].resolve = function  # type: ignore[union-attr]
    for abstract in ("Node", "Actor", "StatusCheckRollupContext"):
        schema.get_type(abstract).resolve_type = lambda value, *_: value["__typename"]  # type: ignore[union-attr]
    return schema


@lru_cache(maxsize=128)
def checked_document(query: str) -> tuple[graphql.DocumentNode | None, tuple[GraphQLError, ...]]:
    """A query's parsed document and its validation errors against the schema, once per query text.

    A client sends the same few queries over and over; parsing and
    validating them is most of the work of answering, and the result
    depends on nothing but the text (the schema is fixed).
    """
    try:
        document = graphql.parse(query)
    except GraphQLError as error:
        return None, (error,)
    return document, tuple(graphql.validate(executable_schema(), document))


def set_resolved(info: Any, thread_id: str, resolved: bool) -> dict[str, Any]:
    try:
        return info.context["world"].resolve_thread(thread_id, info.context["user"], resolved)
    except ApiError as error:
        raise NotFound(error.message) from None


def find_node(world: World, node_id: str) -> dict[str, Any] | None:
    found = world.find_thread(node_id)
    if found is not None:
        return thread_node(found[2])
    for repository in world.repositories.values():
        for pull in repository.pulls.values():
            if pull["node_id"] == node_id:
                return pull_node(world, repository, pull)
            if node_id == f"SCR_sim{pull['head']['sha']}":
                return status_check_rollup(repository, pull["head"]["sha"], pull["base"]["ref"])
    return None


def mutation_fields(payload: Any) -> list[str]:
    """The top-level fields a GraphQL mutation body asks for (``markPullRequestReadyForReview``...); [] otherwise."""
    if not is_mutation(payload):
        return []
    document, _ = checked_document(payload["query"])
    return [
        selection.name.value
        for definition in (document.definitions if document is not None else ())
        if isinstance(definition, graphql.OperationDefinitionNode)
        and definition.operation == graphql.OperationType.MUTATION
        for selection in definition.selection_set.selections
        if isinstance(selection, graphql.FieldNode)
    ]


def is_mutation(payload: Any) -> bool:
    """Whether a GraphQL POST body asks for a mutation (a content-generating request)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return False
    document, _ = checked_document(payload["query"])
    if document is None:
        return False
    wanted = payload.get("operationName")
    return any(
        isinstance(d, graphql.OperationDefinitionNode)
        and d.operation == graphql.OperationType.MUTATION
        and (wanted is None or (d.name is not None and d.name.value == wanted))
        for d in document.definitions
    )


def query_cost(payload: Any) -> int:
    """The primary rate-limit points of one GraphQL POST body, by GitHub's documented rule.

    Every connection field (one with ``first`` or ``last``) needs one request
    per node its enclosing connections can return, each assumed full; the
    sum of those requests divided by 100, rounded to the nearest whole number,
    is the cost, and never less than 1. A body that does not parse costs 1.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return 1
    document, _ = checked_document(payload["query"])
    if document is None:
        return 1
    given = payload.get("variables")
    variables: dict[str, Any] = given if isinstance(given, dict) else {}
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, graphql.FragmentDefinitionNode)}
    operations = [d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode)]
    wanted = payload.get("operationName")
    chosen = [o for o in operations if wanted is None or (o.name is not None and o.name.value == wanted)]
    if len(chosen) != 1:
        return 1
    requests = _connection_requests(chosen[0].selection_set, 1, fragments, variables, set())
    return max(1, math.floor(requests / 100 + 0.5))


def _connection_requests(
    selections: Any, multiplier: int, fragments: dict[str, Any], variables: dict[str, Any], seen: set[str]
) -> int:
    total = 0
    for selection in selections.selections if selections is not None else ():
        if isinstance(selection, graphql.FragmentSpreadNode):
            name = selection.name.value
            if name in fragments and name not in seen:
                total += _connection_requests(
                    fragments[name].selection_set, multiplier, fragments, variables, seen | {name}
                )
        elif isinstance(selection, graphql.InlineFragmentNode):
            total += _connection_requests(selection.selection_set, multiplier, fragments, variables, seen)
        elif isinstance(selection, graphql.FieldNode):
            size = _page_argument(selection, variables)
            inner = multiplier
            if size is not None:
                total += multiplier
                inner = multiplier * size
            total += _connection_requests(selection.selection_set, inner, fragments, variables, seen)
    return total


def _page_argument(field: Any, variables: dict[str, Any]) -> int | None:
    for argument in field.arguments or ():
        if argument.name.value in ("first", "last"):
            value = graphql.value_from_ast_untyped(argument.value, variables)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else PAGE_LIMIT
    return None


def repository_of(world: World, payload: Any) -> str | None:
    """``owner/name`` a GraphQL body is about: its ``owner``/``name`` variables, or the node its id variable names."""
    variables = payload.get("variables") if isinstance(payload, dict) else None
    if not isinstance(variables, dict):
        return None
    owner, name = variables.get("owner"), variables.get("name")
    if isinstance(owner, str) and isinstance(name, str):
        return f"{owner}/{name}"
    ids = [variables[key] for key in ("threadId", "pullRequestId", "id") if isinstance(variables.get(key), str)]
    if not ids:
        return None
    node_id = ids[0]
    found = world.find_thread(node_id)
    if found is not None:
        return found[0].full_name
    for repository in world.repositories.values():
        for pull in repository.pulls.values():
            if node_id in (pull["node_id"], f"SCR_sim{pull['head']['sha']}"):
                return repository.full_name
    return None


def execute(
    world: World,
    payload: Any,
    user: dict[str, Any],
    rate: Any,
    cost: int = 1,
    permissions: dict[str, str] | None = None,
    refusal: str = "Resource not accessible by integration",
) -> dict[str, Any]:
    """One GraphQL POST body -> GitHub's answer object (``data`` and/or ``errors``); ``cost`` is what it was charged.

    ``permissions`` are the token's (None: it may write anything); a mutation
    they do not allow fails with ``refusal`` as its FORBIDDEN message.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return {"errors": [{"message": "A query attribute must be specified and must be a string."}]}
    variables = payload.get("variables") or {}
    if not isinstance(variables, dict):
        return {"errors": [{"message": "Variables are invalid JSON."}]}
    document, invalid = checked_document(payload["query"])
    if document is None or invalid:
        result = graphql.ExecutionResult(data=None, errors=list(invalid))
    else:
        result = graphql.execute_sync(
            executable_schema(),
            document,
            variable_values=variables,
            operation_name=payload.get("operationName"),
            context_value={
                "world": world,
                "user": user,
                "rate": rate,
                "cost": cost,
                "permissions": permissions,
                "refusal": refusal,
            },
        )
    answer: dict[str, Any] = {}
    if result.errors:
        errors = []
        for error in result.errors:
            formatted = dict(error.formatted)
            github_type = getattr(error.original_error, "github_type", None) or getattr(error, "github_type", None)
            if github_type:
                formatted["type"] = github_type
            errors.append(formatted)
        answer["errors"] = errors
    if result.data is not None or not result.errors or any("path" in e for e in answer.get("errors", [])):
        answer = {"data": result.data, **answer}
    return answer
