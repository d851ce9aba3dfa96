"""evaluator/redact.py: every printed form of a token is found and replaced."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

from evaluator.redact import REDACTED, contains_secret, redact

TOKEN = "ghp_redactMe/+0123456789abcdefABCDEF0123"


def test_every_form_is_found_and_replaced():
    forms = [
        TOKEN,
        quote(TOKEN, safe=""),
        quote_plus(TOKEN),
        json.dumps(TOKEN)[1:-1].replace("/", "\\/"),
        base64.b64encode(TOKEN.encode()).decode(),
        base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode(),
        base64.urlsafe_b64encode(f"x-access-token:{TOKEN}".encode()).decode(),
    ]
    for form in forms:
        text = f"Authorization seen: <{form}> end"
        assert contains_secret(text, [TOKEN]), form
        assert redact(text, [TOKEN]) == f"Authorization seen: <{REDACTED}> end"


def test_a_json_line_stays_json_and_other_text_is_untouched():
    line = json.dumps({"message": f"echo token {TOKEN}", "other": "ghp_notTheToken"})
    assert json.loads(redact(line, [TOKEN])) == {"message": f"echo token {REDACTED}", "other": "ghp_notTheToken"}
    assert redact(line, []) == line and redact(line, [""]) == line
