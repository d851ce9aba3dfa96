"""The simulator keeps GitHub's published contract.

Every REST answer of a scenario that exercises every route validates against
the response schema GitHub's OpenAPI description gives for that operation and
status (simulator/contract/rest-responses.json); every GraphQL document the
project sends validates against GitHub's published schema subset
(simulator/contract/github.graphql), and the simulator's answers to them have
the shape that schema implies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import graphql
import jsonschema
import pytest

from simulator.graphql_api import SCHEMA_FILE
from simulator.rest import Rest
from simulator.world import USERS, World, fixture
from tests.simulation import NAME, OTHER_TOKEN, OWNER, Api, make_world
from tools.extract_github_contract import project_documents

CONTRACT = json.loads((Path(SCHEMA_FILE).parent / "rest-responses.json").read_text(encoding="utf-8"))
REPO = f"/repos/{OWNER}/{NAME}"


class Recorder(Api):
    """Api that remembers (operation, status, payload) for every answer."""

    def __init__(self, world: World):
        super().__init__(world)
        self.rest = Rest(world)
        self.answers: list[tuple[str, int, Any]] = []

    def __call__(self, method: str, path: str, body: Any = None, **options: Any):
        status, payload, headers = super().__call__(method, path, body, **options)
        if path != "/graphql":
            operation = self.rest.match(method, path.split("?")[0])[0]
            self.answers.append((operation, status, payload))
        return status, payload, headers


def exercise_every_route(world: World) -> Recorder:
    api = Recorder(world)
    world.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello')\n"}, "Fix")
    world.commit(OWNER, NAME, "feature/y", {"NEWS": "y\n"}, "News")
    api("GET", "/user")
    api("GET", "/rate_limit")
    _, pull, _ = api("POST", f"{REPO}/pulls", {"title": "Fix", "head": "feature/x", "base": "main", "body": "b"})
    api("POST", f"{REPO}/pulls", {"title": "Y", "head": "feature/y", "base": "main", "draft": True})
    api("POST", f"{REPO}/pulls", {"head": "feature/x", "base": "main"})  # 422
    head = pull["head"]["sha"]
    api("GET", f"{REPO}/pulls?state=all")
    api("GET", f"{REPO}/pulls/1")
    api("GET", f"{REPO}/pulls/99")  # 404
    api("PATCH", f"{REPO}/pulls/2", {"title": "Y2"})
    _, comment, _ = api("POST", f"{REPO}/issues/1/comments", {"body": "@codex review"})
    api("GET", f"{REPO}/issues/1/comments")
    api("GET", f"{REPO}/issues/comments/{comment['id']}")
    api("PATCH", f"{REPO}/issues/comments/{comment['id']}", {"body": "@codex review again"})
    api("POST", f"{REPO}/issues/comments/{comment['id']}/reactions", {"content": "eyes"})
    api("GET", f"{REPO}/issues/comments/{comment['id']}/reactions")
    api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"})
    api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"})  # 200: already there
    api("GET", f"{REPO}/issues/1/reactions")
    api(
        "POST",
        f"{REPO}/pulls/1/reviews",
        {"event": "COMMENT", "body": "x", "comments": [{"path": "src/app.py", "line": 1, "body": "P1"}]},
        token=OTHER_TOKEN,
    )
    api("POST", f"{REPO}/pulls/1/reviews", {"event": "APPROVE"}, token=OTHER_TOKEN)
    api("GET", f"{REPO}/pulls/1/reviews")
    _, review_comments, _ = api("GET", f"{REPO}/pulls/1/comments")
    api("POST", f"{REPO}/pulls/1/comments/{review_comments[0]['id']}/replies", {"body": "Fixed."})
    api("GET", f"{REPO}/pulls/1/comments")
    api("POST", f"{REPO}/check-runs", {"name": "ci", "head_sha": head, "status": "completed", "conclusion": "success"})
    api("POST", f"{REPO}/check-runs", {"name": "lint", "head_sha": head, "status": "in_progress"})
    api("GET", f"{REPO}/commits/{head}/check-runs")
    api(
        "POST",
        f"{REPO}/statuses/{head}",
        {"state": "success", "context": "deploy", "description": "ok", "target_url": "https://ci.example/1"},
    )
    api("GET", f"{REPO}/commits/{head}/status")
    api("GET", f"{REPO}/git/ref/heads/feature/x")
    api("GET", REPO)
    api("POST", f"{REPO}/git/refs", {})  # 422: no ref, no sha
    api("POST", f"{REPO}/git/refs", {"ref": "refs/heads/copy", "sha": head})
    api("GET", f"{REPO}/branches/main")
    api("GET", f"{REPO}/branches/main/protection")  # 404 unprotected
    world.set_protection(OWNER, NAME, "main", fixture("rest/branch-protection.json"))
    api("GET", f"{REPO}/branches/main")
    api("GET", f"{REPO}/branches/main/protection")  # 404: the token's account has no admin role
    world.repository(OWNER, NAME).admins.add(USERS["loop_owner"]["login"])
    api("GET", f"{REPO}/branches/main/protection")
    api("GET", f"{REPO}/rules/branches/main")  # no active rules: []
    world.set_rulesets(
        OWNER,
        NAME,
        "main",
        [
            {
                "type": "required_status_checks",
                "ruleset_source_type": "Repository",
                "ruleset_source": f"{OWNER}/{NAME}",
                "ruleset_id": 7,
                "parameters": {
                    "required_status_checks": [{"context": "ci", "integration_id": 15368}],
                    "strict_required_status_checks_policy": False,
                },
            },
            {"type": "deletion", "ruleset_source_type": "Organization", "ruleset_source": OWNER, "ruleset_id": 8},
        ],
    )
    api("GET", f"{REPO}/rules/branches/main")
    api("DELETE", f"{REPO}/issues/comments/{comment['id']}")
    api("PUT", f"{REPO}/pulls/1/merge", {"sha": "0" * 40})  # 409
    api("PUT", f"{REPO}/pulls/1/merge", {"sha": head})  # 405: required checks not reported
    world.set_protection(OWNER, NAME, "main", 404)  # the requirements go, so the merge below is allowed
    world.set_rulesets(OWNER, NAME, "main", [])
    api("PUT", f"{REPO}/pulls/1/merge", {"sha": head, "merge_method": "squash"})
    api("PUT", f"{REPO}/pulls/1/merge", {})  # 405
    api("GET", f"{REPO}/pulls/1/merge")
    api("GET", f"{REPO}/pulls/2/merge")  # 404: not merged
    api("DELETE", f"{REPO}/git/refs/heads/feature/x")
    api("DELETE", f"{REPO}/git/refs/heads/feature/x")  # 422: gone
    api("PATCH", f"{REPO}/pulls/2", {"state": "closed"})
    return api


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    world = make_world(tmp_path_factory.mktemp("contract"))
    yield exercise_every_route(world)
    world.close()


def test_the_contract_covers_exactly_the_served_routes():
    served = {f"{method} {template}" for method, template, _, _ in Rest(None).routes}  # type: ignore[arg-type]
    assert served == set(CONTRACT["operations"])
    assert CONTRACT["source"]["package"].startswith("@octokit/openapi@")


def test_every_route_was_answered_successfully_by_the_scenario(recorded):
    succeeded = {operation for operation, status, _ in recorded.answers if 200 <= status < 300}
    assert succeeded == set(CONTRACT["operations"])


def test_every_rest_answer_validates_against_the_published_schema(recorded):
    checked = 0
    for operation, status, payload in recorded.answers:
        responses = CONTRACT["operations"][operation]["responses"]
        assert str(status) in responses, f"{operation} answered {status}, which GitHub does not document"
        schema = responses[str(status)]
        if schema is None:
            if status in (204, 304):
                assert payload is None, f"{operation} {status} must have no body"
            else:  # an error documented without a schema: GitHub still sends its error object
                assert payload is None or set(payload) == {"message", "documentation_url", "status"}, (
                    operation,
                    status,
                )
            continue
        errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(payload), key=lambda e: list(e.absolute_path))
        assert not errors, f"{operation} {status}: {errors[0].message} at {list(errors[0].absolute_path)}"
        checked += 1
    assert checked >= 35
    assert {status for _, status, _ in recorded.answers} >= {
        200,
        201,
        204,
        404,
        405,
        409,
        422,
    }  # error bodies are checked too


def test_the_validator_would_notice_a_wrong_answer(recorded):
    operation, _, payload = next(
        a for a in recorded.answers if a[0] == "GET /repos/{owner}/{repo}/pulls/{pull_number}" and a[1] == 200
    )
    schema = CONTRACT["operations"][operation]["responses"]["200"]
    broken = {**payload, "number": "1"}
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))
    nullable = {**payload, "merged_at": None, "body": None}  # OpenAPI 'nullable' fields accept null
    assert not list(jsonschema.Draft7Validator(schema).iter_errors(nullable))


def test_recorded_payload_shapes_are_served_key_for_key(recorded):
    shapes = {
        "GET /repos/{owner}/{repo}/pulls/{pull_number}": "rest/pull-request.json",
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": "rest/issue-comment.json",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": "rest/pull-request-review.json",
        "GET /repos/{owner}/{repo}/issues/{issue_number}/reactions": "rest/reaction.json",
    }
    for operation, name in shapes.items():
        payload = next(p for o, s, p in recorded.answers if o == operation and s == 200 and p)
        item = payload[0] if isinstance(payload, list) else payload
        assert list(item) == list(fixture(name)), operation


# -- GraphQL --------------------------------------------------------------------

SCHEMA = graphql.build_schema(SCHEMA_FILE.read_text(encoding="utf-8"))


def test_the_project_sends_graphql_documents_and_each_validates():
    documents = project_documents()
    assert {"observe.github.threads.THREADS_QUERY", "observe.github.threads.THREAD_COMMENTS_QUERY"} <= set(documents)
    for name, text in documents.items():
        assert graphql.validate(SCHEMA, graphql.parse(text)) == [], name
    assert graphql.validate(SCHEMA, graphql.parse("query { viewer { login } }"))  # the check can fail


def with_typenames(text: str) -> graphql.DocumentNode:
    """The document with ``__typename`` in every selection set, so an answer can be replayed."""

    class AddTypename(graphql.Visitor):
        def leave_selection_set(self, node: graphql.SelectionSetNode, *_: Any) -> graphql.SelectionSetNode:
            field = graphql.FieldNode(name=graphql.NameNode(value="__typename"), arguments=(), directives=())
            return graphql.SelectionSetNode(selections=(*node.selections, field))

    return graphql.visit(graphql.parse(text), AddTypename())


def replay(document: graphql.DocumentNode, data: dict[str, Any], variables: dict[str, Any]) -> graphql.ExecutionResult:
    """Execute the document over the answer itself: any value the schema forbids becomes an error."""
    schema = graphql.build_schema(SCHEMA_FILE.read_text(encoding="utf-8"))
    for interface in ("Node", "Actor"):
        schema.get_type(interface).resolve_type = lambda value, *_: value["__typename"]
    operation = next(d for d in document.definitions if isinstance(d, graphql.OperationDefinitionNode))
    root_type = schema.mutation_type if operation.operation == graphql.OperationType.MUTATION else schema.query_type
    for field in root_type.fields.values():
        field.resolve = lambda source, info, **_: source[info.field_name]
    return graphql.execute(
        schema,
        document,
        root_value=data,
        variable_values=variables,
        operation_name=operation.name.value if operation.name else None,
    )


def graphql_world(tmp_path: Path) -> tuple[World, Api, dict[str, Any]]:
    world = make_world(tmp_path)
    api = Api(world)
    world.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello')\n"}, "Fix")
    pull = world.open_pull_request(OWNER, NAME, head="feature/x", title="Fix", draft=True)
    thread = world.add_review_thread(OWNER, NAME, 1, USERS["codex_bot"], "**P1** finding", path="src/app.py", line=1)
    for index in range(120):  # more than one page of comments: the node(id:) query pages the rest
        world.reply_to_review_comment(
            OWNER, NAME, 1, thread["comments"][0]["rest"]["id"], "loop-owner", f"reply {index}"
        )
    world.add_check_run(OWNER, NAME, pull["head"]["sha"], "ci", app_id=15368)
    world.add_status(OWNER, NAME, pull["head"]["sha"], "deploy", "pending")
    variables = {
        "owner": OWNER,
        "name": NAME,
        "number": 1,
        "cursor": None,
        "id": thread["id"],
        "threadId": thread["id"],
        "pullRequestId": pull["node_id"],
        "firstPage": True,
    }
    return world, api, variables


def test_the_simulators_graphql_answers_have_the_schemas_shape(tmp_path):
    world, api, variables = graphql_world(tmp_path)
    documents = project_documents()
    for name, text in documents.items():
        parsed = graphql.parse(text)
        for operation in (d for d in parsed.definitions if isinstance(d, graphql.OperationDefinitionNode)):
            wanted = {v.variable.name.value: variables[v.variable.name.value] for v in operation.variable_definitions}
            if operation.variable_definitions and any(
                v.variable.name.value == "cursor" for v in operation.variable_definitions
            ):
                wanted["cursor"] = None
            single = graphql.DocumentNode(definitions=(operation,))
            typed = with_typenames(graphql.print_ast(single))
            answer = api.graphql(graphql.print_ast(typed), wanted)
            assert "errors" not in answer, (name, answer.get("errors"))
            replayed = replay(typed, answer["data"], wanted)
            assert replayed.errors is None, (name, replayed.errors)
            assert replayed.data == answer["data"], name
    world.close()


def test_a_shape_violation_would_be_caught_by_the_replay():
    document = with_typenames("query { rateLimit { cost remaining } }")
    assert replay(document, {"rateLimit": {"cost": None, "remaining": 1, "__typename": "RateLimit"}}, {}).errors


def test_openapi_nullable_becomes_json_schema_null():
    from tools.extract_github_contract import json_schema

    assert json_schema({"type": "string", "nullable": True, "description": "d", "example": "x"}) == {
        "type": ["string", "null"]
    }
    assert json_schema({"type": "string", "enum": ["a"], "nullable": True}) == {
        "type": ["string", "null"],
        "enum": ["a", None],
    }
    assert json_schema({"allOf": [{"type": "object"}], "nullable": True}) == {
        "anyOf": [{"allOf": [{"type": "object"}]}, {"type": "null"}]
    }
    # A property called "description" is data, not an annotation.
    assert json_schema({"type": "object", "properties": {"description": {"type": "string"}}}) == {
        "type": "object",
        "properties": {"description": {"type": "string"}},
    }
