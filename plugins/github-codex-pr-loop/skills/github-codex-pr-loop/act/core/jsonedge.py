"""The hands' JSON edge: the only two places where a value is a bare JSON object.

``Output`` is what one command prints: one JSON object, its keys listed per
command in references/hands.md. ``Document`` is a document exactly as it is
serialized, hashed and handed to the evaluator (a manifest, a snapshot, a
collected state, an automation payload): its bytes are the contract, so it
stays JSON until it is judged; once judged, the hands read it through the
evaluator's own models (evaluator/models/). Everything else the hands hold
(the journal, the intent, the registry's entries, the ledger) is a typed model.
"""

from typing import Any

Output = dict[str, Any]
Document = dict[str, Any]
