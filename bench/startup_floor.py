"""The start-up floor of bench/initial.py: import pydantic, validate one strict one-field model.

Run as the scripts run (``python -I -B bench/startup_floor.py``). It is the
least any evaluator built on pydantic models pays at start-up: the
interpreter, pydantic itself, building one model's validator (which loads
pydantic's schema machinery) and one validation.
"""

from pydantic import BaseModel, ConfigDict


class One(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    value: str


One.model_validate({"value": "floor"})
