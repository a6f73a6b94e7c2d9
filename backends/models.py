"""Hindsight request models that memwarden reads in more than one place.

``MemoryItem`` is one item of ``POST …/memories`` as Hindsight 1.1.0 validates it: what memwarden
needs is declared, every other field is kept (``extra="allow"``) so that it passes through.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator


class MemoryItem(BaseModel):
    model_config = ConfigDict(extra="allow")
    content: str | list[dict[str, Any]]
    tags: list[str] | None = None
    document_id: str | None = None

    @field_validator("tags", mode="before")
    @classmethod
    def _coerce_tags(cls, v: Any) -> Any:
        # As Hindsight does: JSON-array text is parsed, any other string becomes [s].
        if isinstance(v, str):
            try:
                parsed = json.loads(v)
            except ValueError:
                return [v]
            return parsed if isinstance(parsed, list) else [v]
        return v
