"""Explicit risk acceptance: a plan the person accepted to run without guarantees this machine cannot give.

A plan's validation commands run in a new, empty network namespace
(act/edge/validation.py), and git runs with every protection of the sanitized
profile. Where either cannot hold (no ``/usr/bin/unshare``, user namespaces
refused; an active clean filter such as Git LFS), no plan in the isolated
form can be made. The person may then accept exactly what is given up:
``init --accept-risk G,...`` names the unavailable guarantees, which must be
exactly the ones this checkout lacks. From then on every plan of the loop
whose isolated form cannot hold is made in the explicit form:

- the hands build the acceptance record from the boundary they observed (the
  explicit form, not yet bound), the plan's commands, the run, the account
  and the moment of acceptance, and bind the record's digest into the
  boundary; built from the same inputs, the record is the same, so a rebuilt
  plan has the same hash while nothing changed;
- the record is kept in the state directory (``risk/<digest>.json``) and shown
  to the evaluator with every judgement of a document that binds it;
- a later plan uses the explicit form only within what was accepted: the
  same commands as ``init``'s, no further guarantee given up
  (``risk-acceptance-exceeded``); where the isolated form holds again, it is
  used.

The approval summary shows the record (act/text/summary.py). references/hands.md,
"Explicit risk acceptance".
"""

from __future__ import annotations

from collections.abc import Sequence

from act.core import statedir
from act.core.errors import ActError, UsageError
from act.core.jsonedge import Document
from act.core.state_models import AcceptedRisk, Intent, build
from act.edge import sources
from act.text.summary import GIVEN_UP
from evaluator import policy
from evaluator.canonical import digest
from evaluator.models.recurring import RecurringState

RECORDS = "risk"  # the state directory's folder of acceptance records, one per digest


def parse_accepted(text: str | None) -> list[str] | None:
    """``--accept-risk G,...``: the guarantees the person accepts to lose, sorted and unique."""
    if text is None:
        return None
    named = [part.strip() for part in text.split(",")]
    unknown = [name for name in named if name not in policy.RISK_GUARANTEES]
    if not named or unknown:
        raise UsageError(
            f"--accept-risk takes guarantees separated by commas, each one of {', '.join(policy.RISK_GUARANTEES)}; "
            f"not {', '.join(repr(name) for name in unknown) or repr(text)}"
        )
    return sorted(set(named))


def unavailable_guarantees(unbound: Document) -> list[str]:
    """The guarantees an explicit-form boundary lacks, as the record must name them (the evaluator's rule)."""
    from evaluator.models.plan import ExecutionBoundary
    from evaluator.rules.risk import required_guarantees

    return sorted(required_guarantees(ExecutionBoundary.model_validate({**unbound, "risk_acceptance_sha256": None})))


def why_not_isolated(world: sources.World, checkout: str, repository: str, commands: Sequence[object]) -> str | None:
    """Why a plan with these commands cannot have the isolated form here (an error code), or ``None``: it can."""
    from act.edge import validation

    if commands and not validation.network_isolation_available():
        return "isolation-unavailable"  # no network namespace for the commands
    try:
        sources.execution_boundary(world, checkout, repository)
    except ActError as error:
        if error.code != "git-isolation-unavailable":
            raise
        return error.code  # a git protection off, or an active clean filter
    return None


def _in_words(guarantees: Sequence[str]) -> str:
    return "; ".join(GIVEN_UP[name] for name in guarantees)


def initial_acceptance(
    world: sources.World, intent: Intent, accepted: list[str] | None, accepted_at: str
) -> AcceptedRisk | None:
    """At ``init``: the person's acceptance, when the isolated form cannot hold and they named exactly what it lacks.

    ``None`` when the isolated form holds (and then no acceptance may be given).
    Refused, before any plan exists, when it cannot hold and the person did not
    accept exactly the guarantees this checkout lacks; the error names them.
    """
    checkout, repository, commands = intent.checkout, intent.repository, intent.commands
    why = why_not_isolated(world, checkout, repository, commands)
    if why is None:
        if accepted is not None:
            raise ActError(
                "risk-acceptance-not-needed",
                "the isolated form holds here (the validation commands can run without network and git with "
                "every protection), so nothing needs accepting; run `loop.py init` again without --accept-risk",
                path="/accept_risk",
            )
        return None
    required = unavailable_guarantees(sources.execution_boundary(world, checkout, repository, explicit=True))
    flag = f"--accept-risk {','.join(required)}"
    if accepted is None:
        network = why == "isolation-unavailable"
        from act.edge.sandbox import isolation_advice

        raise ActError(
            why,
            f"this plan cannot have the isolated form here: {_in_words(required)}; no plan is built. Run the "
            "loop where user namespaces are allowed (`unshare -rn true` must work) and the checkout has no active "
            "clean filter, or run the validation yourself and give no --command; or, only if the person accepts "
            f"exactly these losses, run `loop.py init` again adding `{flag}` (the approval summary shows the "
            'acceptance record the plan hash binds; references/prerequisites.md, "Validation isolation").'
            + (isolation_advice() if network else ""),
            path="/commands" if network else "/execution_boundary/isolation",
            details={"unavailable_guarantees": required, "accept_with": flag},
        )
    if accepted != required:
        raise ActError(
            "risk-acceptance-mismatch",
            f"--accept-risk names {','.join(accepted)}, and this plan gives up exactly {','.join(required)}: an "
            f"acceptance must name exactly what is given up; if the person accepts that, use `{flag}`",
            path="/accept_risk",
            details={"unavailable_guarantees": required, "accept_with": flag},
        )
    return build(AcceptedRisk, {"accepted_at": accepted_at, "unavailable_guarantees": required})


def bound_record(
    unbound: Document,
    acceptance: AcceptedRisk,
    *,
    commands: Sequence[Document],
    run_id: str,
    user_id: int,
) -> tuple[Document, Document]:
    """The acceptance record of one plan, and its boundary bound to the record's digest.

    Refused (``risk-acceptance-exceeded``) when the plan gives up a guarantee
    the person did not accept.
    """
    guarantees = unavailable_guarantees(unbound)
    beyond = sorted(set(guarantees) - set(acceptance.unavailable_guarantees))
    if beyond:
        raise ActError(
            "risk-acceptance-exceeded",
            f"this plan would also give up {', '.join(beyond)} ({_in_words(beyond)}), which the person did not "
            "accept at init; no plan is built. Remove what causes it (an active clean filter, a changed git "
            "configuration), or start a new loop with `loop.py init` and have the person accept it",
            path="/execution/isolation",
            details={"beyond_acceptance": beyond},
        )
    accepted = {key: value for key, value in unbound.items() if key != "risk_acceptance_sha256"}
    record = {
        "accepted_at": acceptance.accepted_at,
        "accepted_by_user_id": user_id,
        "commands": [dict(command) for command in commands],
        "execution_boundary": accepted,
        "kind": policy.EXPLICIT_RISK,
        "run_id": run_id,
        "unavailable_guarantees": guarantees,
        "version": 1,
    }
    return record, {**accepted, "risk_acceptance_sha256": digest(record)}


def remediation_boundary(
    world: sources.World,
    intent: Intent,
    state: RecurringState,
    commands: Sequence[Document],
) -> tuple[Document, Document | None]:
    """A remediation plan's execution boundary, and its acceptance record when in the explicit form."""
    checkout, repository = intent.checkout, state.repository
    why = why_not_isolated(world, checkout, repository, commands)
    if why is None:
        return sources.execution_boundary(world, checkout, repository), None
    acceptance = intent.risk_acceptance
    if acceptance is None:
        required = unavailable_guarantees(sources.execution_boundary(world, checkout, repository, explicit=True))
        raise ActError(
            why,
            f"this plan cannot have the isolated form here: {_in_words(required)}, and the person accepted no "
            "risk at init; no plan is built. Plan with --no-commands and run the validation yourself, or run the "
            "loop where the isolated form holds",
            path="/execution/isolation",
            details={"unavailable_guarantees": required},
        )
    if commands and [list(command["argv"]) for command in commands] != [list(argv) for argv in intent.commands]:
        raise ActError(
            "risk-acceptance-exceeded",
            "the person accepted to run exactly init's validation commands without isolation (or none), and this "
            "plan names others; no plan is built. Plan with the loop's commands (give no --command) or with "
            "--no-commands",
            path="/commands",
        )
    unbound = sources.execution_boundary(world, checkout, repository, explicit=True)
    record, boundary = bound_record(
        unbound, acceptance, commands=commands, run_id=state.run_id, user_id=state.authenticated_user_id
    )
    return boundary, record


def bound_digest(document: Document) -> str | None:
    """The acceptance digest a document binds: an initial document's boundary, or a state's remediation plan's."""
    if "initial_snapshot" in document:
        boundary = document["initial_snapshot"].get("execution_boundary")
    else:
        boundary = (document.get("remediation_manifest") or {}).get("execution")
    found = boundary.get("risk_acceptance_sha256") if isinstance(boundary, dict) else None
    return found if isinstance(found, str) else None


def keep(directory: statedir.StateDir, record: Document) -> None:
    directory.write(f"{RECORDS}/{digest(record)}.json", record)


def record_for(directory: statedir.StateDir, document: Document) -> Document | None:
    """The kept record the document binds, for the evaluator to verify; none bound: ``None``.

    A bound record that is not kept, or no longer digests to its name, permits
    no write: the evaluator is never asked to pass a plan on its shape alone.
    """
    bound = bound_digest(document)
    if bound is None:
        return None
    name = f"{RECORDS}/{bound}.json"
    if not directory.exists(name):
        raise ActError(
            "risk-record-not-kept",
            f"the plan binds the risk acceptance record {bound[:12]}..., and the state directory does not keep it; "
            "no write is permitted; start over with `loop.py init`",
            path="/execution/risk_acceptance_sha256",
        )
    record = directory.read(name)
    if digest(record) != bound:
        raise ActError(
            "risk-record-changed",
            f"the kept risk acceptance record {name} no longer digests to its name; no write is permitted",
            path="/execution/risk_acceptance_sha256",
        )
    return record
