"""REST routes of the simulated GitHub: (method, path pattern) -> handler over a World.

Each handler returns ``(status, payload)`` (payload None for a bodiless 204) or
raises ``ApiError``. The routes are exactly the operations listed in
``ROUTES``; each is named by its OpenAPI method and path template, which is
how the contract tests find its response schema (simulator/contract/).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from datetime import UTC
from typing import Any

from simulator.world import API, DRAFTS_UNSUPPORTED, WEB, ApiError, Repository, World, fixture, not_accessible

Handler = Callable[..., tuple[int, Any]]

_PARAMETER = re.compile(r"\{(\w+)\}")


def _compile(template: str) -> re.Pattern[str]:
    """An OpenAPI path template as a regex; ``{branch}`` and ``{ref}`` may hold '/'."""

    def group(match: re.Match[str]) -> str:
        name = match.group(1)
        body = r".+" if name in ("branch", "ref") else r"[^/]+"
        return f"(?P<{name}>{body})"

    return re.compile(_PARAMETER.sub(group, template.replace(".", r"\.")) + r"\Z")


class Rest:
    """Dispatch table plus handlers. ``request`` is a small dict view: args, json, user, token."""

    def __init__(self, world: World):
        self.world = world
        self.routes: list[tuple[str, str, re.Pattern[str], Handler]] = []
        for method, template, handler in self._table():
            self.routes.append((method, template, _compile(template), handler))

    def match(self, method: str, path: str) -> tuple[str, Handler, dict[str, str]] | None:
        """The route for a request: (operation key 'METHOD template', handler, path parameters)."""
        path_known = False
        for route_method, template, pattern, handler in self.routes:
            found = pattern.match(path)
            if found:
                path_known = True
                if route_method == method:
                    return f"{method} {template}", handler, found.groupdict()
        if path_known:
            raise ApiError(404, "Not Found")
        return None

    def _table(self) -> list[tuple[str, str, Handler]]:
        repo = "/repos/{owner}/{repo}"
        return [
            ("GET", "/user", self.get_user),
            ("GET", "/rate_limit", self.get_rate_limit),
            ("GET", repo, self.get_repository),
            ("GET", repo + "/pulls", self.list_pulls),
            ("POST", repo + "/pulls", self.create_pull),
            ("GET", repo + "/pulls/{pull_number}", self.get_pull),
            ("PATCH", repo + "/pulls/{pull_number}", self.update_pull),
            ("GET", repo + "/pulls/{pull_number}/merge", self.pull_merged),
            ("PUT", repo + "/pulls/{pull_number}/merge", self.merge_pull),
            ("GET", repo + "/pulls/{pull_number}/reviews", self.list_reviews),
            ("POST", repo + "/pulls/{pull_number}/reviews", self.create_review),
            ("GET", repo + "/pulls/{pull_number}/comments", self.list_review_comments),
            ("POST", repo + "/pulls/{pull_number}/comments/{comment_id}/replies", self.reply_review_comment),
            ("GET", repo + "/issues/{issue_number}/comments", self.list_issue_comments),
            ("POST", repo + "/issues/{issue_number}/comments", self.create_issue_comment),
            ("GET", repo + "/issues/comments/{comment_id}", self.get_issue_comment),
            ("PATCH", repo + "/issues/comments/{comment_id}", self.update_issue_comment),
            ("DELETE", repo + "/issues/comments/{comment_id}", self.delete_issue_comment),
            ("GET", repo + "/issues/comments/{comment_id}/reactions", self.list_comment_reactions),
            ("POST", repo + "/issues/comments/{comment_id}/reactions", self.create_comment_reaction),
            ("GET", repo + "/issues/{issue_number}/reactions", self.list_issue_reactions),
            ("POST", repo + "/issues/{issue_number}/reactions", self.create_issue_reaction),
            ("GET", repo + "/commits/{ref}/check-runs", self.list_check_runs),
            ("POST", repo + "/check-runs", self.create_check_run),
            ("GET", repo + "/commits/{ref}/status", self.combined_status),
            ("POST", repo + "/statuses/{sha}", self.create_status),
            ("GET", repo + "/git/ref/{ref}", self.get_ref),
            ("POST", repo + "/git/refs", self.create_ref),
            ("DELETE", repo + "/git/refs/{ref}", self.delete_ref),
            ("GET", repo + "/branches/{branch}/protection", self.get_protection),
            ("GET", repo + "/branches/{branch}", self.get_branch),
            ("GET", repo + "/rules/branches/{branch}", self.get_branch_rules),
        ]

    # -- helpers ----------------------------------------------------------

    def _repo(self, owner: str, repo: str) -> Repository:
        return self.world.repository(owner, repo)

    @staticmethod
    def _number(value: str) -> int:
        if not value.isdigit():
            raise ApiError(404, "Not Found")
        return int(value)

    @staticmethod
    def _body(request: dict[str, Any], *required: str) -> dict[str, Any]:
        body = request["json"]
        if not isinstance(body, dict):
            raise ApiError(400, "Problems parsing JSON")
        missing = [key for key in required if not isinstance(body.get(key), str) or not body.get(key)]
        if missing:
            raise ApiError(422, "Invalid request.\n\n" + ", ".join(f'"{key}" wasn\'t supplied.' for key in missing))
        return body

    def _pulls_of(self, repository: Repository, number: int) -> dict[str, Any]:
        return self.world.pull_request(repository.owner, repository.name, number)

    # -- users and limits ---------------------------------------------------

    def get_user(self, request: dict[str, Any]) -> tuple[int, Any]:
        user = fixture("rest/private-user.json")
        account = request["user"]
        user.update(
            {
                key: account[key]
                for key in ("login", "id", "node_id", "avatar_url", "url", "html_url", "type", "site_admin")
            }
        )
        return 200, user

    def get_rate_limit(self, request: dict[str, Any]) -> tuple[int, Any]:
        def view(resource: str) -> dict[str, int]:
            window = self.world.rate_window(request["token"], resource)
            return {
                "limit": window.limit,
                "used": window.used,
                "remaining": window.limit - window.used,
                "reset": window.reset,
            }

        core, graphql = view("core"), view("graphql")
        return 200, {"resources": {"core": core, "graphql": graphql, "search": view("search")}, "rate": core}

    # -- pull requests --------------------------------------------------------

    def list_pulls(self, request: dict[str, Any], owner: str, repo: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        state = request["args"].get("state", "open")
        if state not in ("open", "closed", "all"):
            raise ApiError(422, "Validation Failed")
        pulls = [self._pulls_of(repository, number) for number in repository.pulls]
        pulls = [p for p in pulls if state == "all" or p["state"] == state]
        head, base = request["args"].get("head"), request["args"].get("base")
        if head:
            pulls = [p for p in pulls if p["head"]["label"].lower() == head.lower()]
        if base:
            pulls = [p for p in pulls if p["base"]["ref"] == base]
        pulls.sort(key=lambda p: -p["number"])  # sort=created, direction=desc
        return 200, pulls

    def get_repository(self, request: dict[str, Any], owner: str, repo: str) -> tuple[int, Any]:
        """The full repository, with ``permissions``: the authenticated account's role, not the token's."""
        repository = self._repo(owner, repo)
        payload = self.world.repository_payload(repository)
        role = self.world.role(repository, request["user"]["login"])
        ranks = ["read", "triage", "write", "maintain", "admin"]
        held = ranks.index(role)
        names = {"pull": "read", "triage": "triage", "push": "write", "maintain": "maintain", "admin": "admin"}
        payload["permissions"] = {key: held >= ranks.index(level) for key, level in names.items()}
        payload.update(network_count=0, subscribers_count=0)  # the full repository's counts (no forks, no watchers)
        return 200, payload

    def create_pull(self, request: dict[str, Any], owner: str, repo: str) -> tuple[int, Any]:
        body = self._body(request, "head", "base")
        repository = self._repo(owner, repo)
        if body.get("draft") is True and not self.world.drafts_possible(repository):
            # GitHub's answer in a private repository of a Free or Pro account (docs: "About pull requests").
            detail = {"resource": "PullRequest", "code": "custom", "message": DRAFTS_UNSUPPORTED}
            raise ApiError(422, "Validation Failed", errors=[detail])
        head = body["head"].split(":", 1)[-1]
        pull = self.world.open_pull_request(
            owner,
            repo,
            head=head,
            base=body["base"],
            title=body.get("title") or head,
            body=body.get("body"),
            draft=bool(body.get("draft", False)),
            author=request["user"]["login"],
        )
        return 201, pull

    def get_pull(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        return 200, self.world.read_pull_request(owner, repo, self._number(pull_number))

    def update_pull(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        body = self._body(request)
        if "state" in body and body["state"] not in ("open", "closed"):
            raise ApiError(422, "Validation Failed")
        changes: dict[str, Any] = {key: body[key] for key in ("title", "body", "state", "base") if key in body}
        return 200, self.world.update_pull_request(owner, repo, self._number(pull_number), changes)

    def merge_pull(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        body = request["json"] if isinstance(request["json"], dict) else {}
        method = body.get("merge_method", "merge")
        if method not in ("merge", "squash", "rebase"):
            raise ApiError(422, "Validation Failed")
        return 200, self.world.merge_pull_request(
            owner,
            repo,
            self._number(pull_number),
            sha=body.get("sha"),
            method=method,
            title=body.get("commit_title"),
            message=body.get("commit_message"),
        )

    def pull_merged(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        if not self.world.pull_request(owner, repo, self._number(pull_number))["merged"]:
            raise ApiError(404, "Not Found")
        return 204, None

    # -- reviews and review comments -----------------------------------------

    def list_reviews(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        number = self._number(pull_number)
        self.world.pull_request(owner, repo, number)
        return 200, self._repo(owner, repo).reviews.get(number, [])

    def create_review(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        body = self._body(request)
        states = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}
        event = body.get("event")
        if event not in states:
            raise ApiError(422, "Unprocessable Entity")  # a pending review is not modelled
        comments = body.get("comments") or []
        if not isinstance(comments, list) or not all(
            isinstance(c, dict) and isinstance(c.get("body"), str) for c in comments
        ):
            raise ApiError(422, "Validation Failed")
        review = self.world.add_review(
            owner,
            repo,
            self._number(pull_number),
            request["user"],
            body.get("body") or "",
            states[event],
            commit_id=body.get("commit_id"),
            comments=comments,
        )
        return 200, review

    def list_review_comments(self, request: dict[str, Any], owner: str, repo: str, pull_number: str) -> tuple[int, Any]:
        number = self._number(pull_number)
        self.world.pull_request(owner, repo, number)
        return 200, self._repo(owner, repo).review_comments.get(number, [])

    def reply_review_comment(
        self, request: dict[str, Any], owner: str, repo: str, pull_number: str, comment_id: str
    ) -> tuple[int, Any]:
        body = self._body(request, "body")
        return 201, self.world.reply_to_review_comment(
            owner, repo, self._number(pull_number), self._number(comment_id), request["user"], body["body"]
        )

    # -- issue comments and reactions ----------------------------------------

    def list_issue_comments(self, request: dict[str, Any], owner: str, repo: str, issue_number: str) -> tuple[int, Any]:
        number = self._number(issue_number)
        repository = self._repo(owner, repo)
        if number not in repository.pulls:
            raise ApiError(404, "Not Found")
        return 200, repository.issue_comments.get(number, [])

    def create_issue_comment(
        self, request: dict[str, Any], owner: str, repo: str, issue_number: str
    ) -> tuple[int, Any]:
        body = self._body(request, "body")
        return 201, self.world.add_issue_comment(owner, repo, self._number(issue_number), request["user"], body["body"])

    def get_issue_comment(self, request: dict[str, Any], owner: str, repo: str, comment_id: str) -> tuple[int, Any]:
        return 200, self.world.find_issue_comment(self._repo(owner, repo), self._number(comment_id))[1]

    def update_issue_comment(self, request: dict[str, Any], owner: str, repo: str, comment_id: str) -> tuple[int, Any]:
        body = self._body(request, "body")
        return 200, self.world.edit_issue_comment(owner, repo, self._number(comment_id), body["body"])

    def delete_issue_comment(self, request: dict[str, Any], owner: str, repo: str, comment_id: str) -> tuple[int, Any]:
        self.world.delete_issue_comment(owner, repo, self._number(comment_id))
        return 204, None

    _CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")

    def _reaction_content(self, request: dict[str, Any]) -> str:
        content = self._body(request, "content")["content"]
        if content not in self._CONTENTS:
            raise ApiError(422, "Validation Failed")
        return content

    def list_issue_reactions(
        self, request: dict[str, Any], owner: str, repo: str, issue_number: str
    ) -> tuple[int, Any]:
        number = self._number(issue_number)
        repository = self._repo(owner, repo)
        if number not in repository.pulls:
            raise ApiError(404, "Not Found")
        reactions = repository.issue_reactions.get(number, [])
        content = request["args"].get("content")
        return 200, [r for r in reactions if content in (None, r["content"])]

    def create_issue_reaction(
        self, request: dict[str, Any], owner: str, repo: str, issue_number: str
    ) -> tuple[int, Any]:
        reaction, created = self.world.add_reaction(
            owner, repo, self._number(issue_number), request["user"], self._reaction_content(request)
        )
        return (201 if created else 200), reaction

    def list_comment_reactions(
        self, request: dict[str, Any], owner: str, repo: str, comment_id: str
    ) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        identifier = self._number(comment_id)
        self.world.find_issue_comment(repository, identifier)
        return 200, repository.comment_reactions.get(identifier, [])

    def create_comment_reaction(
        self, request: dict[str, Any], owner: str, repo: str, comment_id: str
    ) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        number, _ = self.world.find_issue_comment(repository, self._number(comment_id))
        reaction, created = self.world.add_reaction(
            owner, repo, number, request["user"], self._reaction_content(request), comment_id=self._number(comment_id)
        )
        return (201 if created else 200), reaction

    # -- checks and statuses ----------------------------------------------------

    def _sha(self, repository: Repository, ref: str) -> str:
        if re.fullmatch(r"[0-9a-f]{40}", ref):
            return ref
        tip = repository.tip(ref)
        if tip is None:
            raise ApiError(422, f"No commit found for SHA: {ref}")
        return tip

    def list_check_runs(self, request: dict[str, Any], owner: str, repo: str, ref: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        sha = self._sha(repository, ref)
        runs = [run for run in repository.check_runs if run["head_sha"] == sha]
        return 200, {"total_count": len(runs), "check_runs": runs}

    def create_check_run(self, request: dict[str, Any], owner: str, repo: str) -> tuple[int, Any]:
        body = self._body(request, "name", "head_sha")
        status = body.get("status", "queued")
        if status not in ("queued", "in_progress", "completed") or (status == "completed") != ("conclusion" in body):
            raise ApiError(422, "Validation Failed")
        run = self.world.add_check_run(
            owner, repo, body["head_sha"], body["name"], status=status, conclusion=body.get("conclusion")
        )
        return 201, run

    def combined_status(self, request: dict[str, Any], owner: str, repo: str, ref: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        sha = self._sha(repository, ref)
        statuses = repository.statuses.get(sha, [])
        states = {status["state"] for status in statuses}
        state = (
            "failure"
            if states & {"failure", "error"}
            else "pending"
            if "pending" in states or not states
            else "success"
        )
        combined = fixture("rest/combined-commit-status.json")
        combined.update(
            {
                "state": state,
                "statuses": statuses,
                "sha": sha,
                "total_count": len(statuses),
                "repository": self._minimal_repository(repository),
                "commit_url": f"{API}/repos/{repository.full_name}/commits/{sha}",
                "url": f"{API}/repos/{repository.full_name}/commits/{sha}/status",
            }
        )
        return 200, combined

    def _minimal_repository(self, repository: Repository) -> dict[str, Any]:
        template = fixture("rest/combined-commit-status.json")["repository"]
        full = self.world.repository_payload(repository)
        return {key: full.get(key, value) for key, value in template.items()}

    def create_status(self, request: dict[str, Any], owner: str, repo: str, sha: str) -> tuple[int, Any]:
        body = self._body(request, "state")
        if body["state"] not in ("error", "failure", "pending", "success"):
            raise ApiError(422, "Validation Failed")
        status = self.world.add_status(
            owner,
            repo,
            sha,
            body.get("context") or "default",
            body["state"],
            description=body.get("description"),
            target_url=body.get("target_url"),
        )
        return 201, {**status, "creator": copy.deepcopy(request["user"])}

    # -- refs, branches, protection -------------------------------------------

    def get_ref(self, request: dict[str, Any], owner: str, repo: str, ref: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        if not ref.startswith("heads/"):
            raise ApiError(404, "Not Found")
        branch = ref.removeprefix("heads/")
        sha = repository.tip(branch)
        if sha is None:
            raise ApiError(404, "Not Found")
        api = f"{API}/repos/{repository.full_name}"
        return 200, {
            "ref": f"refs/heads/{branch}",
            "node_id": f"REF_sim{branch}",
            "url": f"{api}/git/refs/heads/{branch}",
            "object": {"type": "commit", "sha": sha, "url": f"{api}/git/commits/{sha}"},
        }

    def create_ref(self, request: dict[str, Any], owner: str, repo: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        body = self._body(request, "ref", "sha")
        ref, sha = body["ref"], body["sha"]
        if not ref.startswith("refs/heads/") or ref.count("/") < 2:
            raise ApiError(422, "Reference name must start with 'refs/' and have at least two slashes.")
        branch = ref.removeprefix("refs/heads/")
        if repository.tip(branch) is not None:
            raise ApiError(422, "Reference already exists")
        if not repository.bare.has_commit(sha):
            raise ApiError(422, "Object does not exist")
        repository.bare.set_ref(branch, sha)
        return 201, self.get_ref(request, owner, repo, f"heads/{branch}")[1]

    def delete_ref(self, request: dict[str, Any], owner: str, repo: str, ref: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        branch = ref.removeprefix("heads/")
        if not ref.startswith("heads/") or repository.tip(branch) is None:
            raise ApiError(422, "Reference does not exist")
        repository.bare.delete_ref(branch)
        self.world.emit("branch.deleted", repository=repository, branch=branch)
        return 204, None

    def _commit(self, repository: Repository, sha: str) -> dict[str, Any]:
        """The ``commit`` schema for a tip; a pinned name the repository does not hold gets neutral details."""
        api, html = f"{API}/repos/{repository.full_name}", f"{WEB}/{repository.full_name}"
        message, tree, parents, when = "", "0" * 40, [], self.world.clock.iso()
        if repository.bare.has_commit(sha):
            raw = repository.bare.git("cat-file", "commit", sha)
            header, _, message = raw.partition("\n\n")
            for line in header.splitlines():
                key, _, value = line.partition(" ")
                if key == "tree":
                    tree = value
                elif key == "parent":
                    parents.append(value)
                elif key == "committer":
                    from datetime import datetime

                    when = datetime.fromtimestamp(int(value.rsplit(" ", 2)[1]), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        person = {"name": "Simulated Author", "email": "author@example.invalid", "date": when}
        return {
            "url": f"{api}/commits/{sha}",
            "sha": sha,
            "node_id": f"C_sim{sha[:12]}",
            "html_url": f"{html}/commit/{sha}",
            "comments_url": f"{api}/commits/{sha}/comments",
            "commit": {
                "url": f"{api}/git/commits/{sha}",
                "author": person,
                "committer": person,
                "message": message.strip(),
                "comment_count": 0,
                "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "payload": None,
                    "signature": None,
                    "verified_at": None,
                },
            },
            "author": None,
            "committer": None,
            "parents": [{"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{html}/commit/{p}"} for p in parents],
        }

    def get_branch(self, request: dict[str, Any], owner: str, repo: str, branch: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        sha = repository.tip(branch)
        if sha is None:
            raise ApiError(404, "Branch not found")
        rules = repository.branch_protection(branch)
        protected = rules != 404
        api = f"{API}/repos/{repository.full_name}"
        checks = rules.get("required_status_checks") if isinstance(rules, dict) else None
        protection: dict[str, Any] = {"enabled": protected}
        if protected:
            contexts = list(checks.get("contexts", [])) if isinstance(checks, dict) else []
            protection["required_status_checks"] = {
                "enforcement_level": "non_admins" if checks else "off",
                "contexts": contexts,
                "checks": [{"context": c, "app_id": None} for c in contexts],
            }
        return 200, {
            "name": branch,
            "commit": self._commit(repository, sha),
            "_links": {"self": f"{api}/branches/{branch}", "html": f"{WEB}/{repository.full_name}/tree/{branch}"},
            "protected": protected,
            "protection": protection,
            "protection_url": f"{api}/branches/{branch}/protection",
        }

    def get_protection(self, request: dict[str, Any], owner: str, repo: str, branch: str) -> tuple[int, Any]:
        repository = self._repo(owner, repo)
        if repository.tip(branch) is None:
            raise ApiError(404, "Branch not found")
        token = request["token"]
        if not repository.may_read_protection(token, request["user"]["login"], self.world.token_permissions.get(token)):
            # What GitHub answers a reader without admin rights, protected branch or not.
            if token in self.world.token_permissions:
                raise ApiError(403, not_accessible(token))
            raise ApiError(404, "Not Found")
        rules = repository.branch_protection(branch)
        if rules == 404:
            raise ApiError(404, "Branch not protected")
        if isinstance(rules, int):
            raise ApiError(rules, "Resource not accessible by integration")
        return 200, rules

    def get_branch_rules(self, request: dict[str, Any], owner: str, repo: str, branch: str) -> tuple[int, Any]:
        """Active rules for a branch name (the branch need not exist), as GitHub lists them."""
        rules = self._repo(owner, repo).branch_rules(branch)
        if isinstance(rules, int):
            raise ApiError(rules, "Resource not accessible by integration" if rules == 403 else "Not Found")
        return 200, rules
