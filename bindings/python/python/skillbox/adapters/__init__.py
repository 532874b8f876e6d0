"""Adapters from a provider's tools to agent frameworks' tool types. Each imports its
framework only when called, so ``import skillbox`` needs none of them."""

from __future__ import annotations

import json
from typing import Any


def answer_text(answer: Any) -> str:
    """A call's answer as the model reads it: the text of ``load_skill``, else the JSON of the
    answer (a ``use_skill`` result or a failure)."""
    return answer if isinstance(answer, str) else json.dumps(answer)
