"""Hindsight 1.1.0 request models, read by the Hindsight front and by the servers that speak
Hindsight's API over something else (the self-hosted store's, the one in front of Mem0).

``MemoryItem`` is one item of ``POST …/memories`` as Hindsight 1.1.0 validates it: what memwarden
needs is declared with Hindsight's checks (so a malformed item is refused with Hindsight's ``422``
before governance records anything), every other field is kept (``extra="allow"``) so that it
passes through. Validators check and return the value the client sent: the forwarded item is the
client's JSON, not a re-serialized model. Blank content is the exception: governance judges it
(``content.empty``, the rest of the batch goes on) where Hindsight would refuse the whole request;
``StoredItem`` below adds Hindsight's refusal, for the servers behind governance.
"""

from __future__ import annotations

import base64
import binascii
import json
import unicodedata
from datetime import MAXYEAR, MINYEAR, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidatorFunctionWrapHandler, field_validator, model_validator


# A multimodal item's content blocks, discriminated on ``type`` as Hindsight's are (its names, so
# that a refusal's ``loc`` reads as Hindsight's). Checked only: the item forwarded keeps the
# client's blocks as sent.
class TextContentBlock(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["text"]
    text: str


class Base64AttachmentSource(BaseModel):
    """Hindsight's only attachment source: the bytes in base64 and a media type of its form (a
    ``text/html; charset=…`` or one with a line break is refused here, as there)."""

    model_config = ConfigDict(extra="allow")
    type: Literal["base64"] = "base64"
    media_type: str = Field(pattern=r"^[A-Za-z0-9.+_-]+/[A-Za-z0-9.+_-]+$", max_length=255)
    data: str


class ImageContentBlock(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["image"]
    source: Base64AttachmentSource


class FileContentBlock(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["file"]
    source: Base64AttachmentSource
    filename: str | None = Field(None, max_length=1024)


ContentBlockItem = Annotated[TextContentBlock | ImageContentBlock | FileContentBlock, Field(discriminator="type")]


class EntityInput(BaseModel):
    """An entity a retain names for its item (``items[].entities``), as Hindsight validates it."""

    model_config = ConfigDict(extra="allow")
    text: str
    type: str | None = None


# memwarden's limits on the fields around an item's content (the content's own is
# ``governance.max_length``): past them, Hindsight's 422 shape naming the field, nothing written.
MAX_TAG_CHARS = 512
MAX_DOCUMENT_ID_CHARS = 1024
MAX_FIELD_CHARS = 65_536  # context, and metadata or any other field as JSON


class MemoryItem(BaseModel):
    model_config = ConfigDict(extra="allow")
    content: str | list[ContentBlockItem]
    tags: list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None = None
    document_id: str | None = Field(None, max_length=MAX_DOCUMENT_ID_CHARS)
    timestamp: str | None = None
    context: str | None = Field(None, max_length=MAX_FIELD_CHARS)
    metadata: dict[str, str] | None = None
    entities: list[EntityInput] | None = None

    @model_validator(mode="after")
    def _fields_within_limits(self) -> MemoryItem:
        entities = [e.model_dump(exclude_unset=True) for e in self.entities] if self.entities is not None else None
        fields = {"metadata": self.metadata, "entities": entities, **(self.model_extra or {})}
        for name, value in fields.items():
            if value is not None and len(json.dumps(value, ensure_ascii=False, default=str)) > MAX_FIELD_CHARS:
                raise ValueError(f"{name} is longer than {MAX_FIELD_CHARS} characters as JSON")
        return self

    @field_validator("content", mode="wrap")
    @classmethod
    def _content_as_sent(cls, v: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        handler(v)  # Hindsight's checks, with its error locations
        return v

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

    @field_validator("timestamp", mode="before")
    @classmethod
    def _check_timestamp(cls, v: Any) -> Any:
        # Hindsight's: empty or null is "now", "unset" stores none, anything else is ISO 8601 with a
        # real year (1 and 9999 are placeholders, refused).
        if v is None or v == "" or (isinstance(v, str) and v.lower() == "unset"):
            return v or None
        if not isinstance(v, str):
            raise ValueError(f"timestamp must be a string or datetime, got {type(v).__name__}")
        try:
            when = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"Invalid timestamp/event_date format: '{v}'. Expected ISO format like '2024-01-15T10:30:00'"
                " or '2024-01-15T10:30:00Z', or the special value 'unset' to store without a timestamp."
            ) from None
        if when.year in (MINYEAR, MAXYEAR):
            raise ValueError(
                f"timestamp year {when.year} is a placeholder, not a date; send a real date or 'unset' to store"
                " without one."
            )
        return v


def attachment_problem(items: list[MemoryItem]) -> str | None:
    """Hindsight's ``400`` for an image or file block whose data is not base64 (its words), before
    anything is judged or written; None when every block decodes."""
    for i, item in enumerate(items):
        if isinstance(item.content, str):
            continue
        for j, block in enumerate(item.content):  # the blocks as sent (checked against the models)
            if isinstance(block, dict) and block.get("type") in ("image", "file"):
                try:
                    base64.b64decode(str((block.get("source") or {}).get("data", "")), validate=True)
                except (binascii.Error, ValueError) as exc:
                    return f"items[{i}].content[{j}]: attachment source data is not valid base64: {exc}"
    return None


# engine/retain/bank_utils.py: BANK_ID_MAX_BYTES, validate_new_bank_id.
BANK_ID_MAX_BYTES = 192


def check_new_bank_id(bank_id: str) -> None:
    """``validate_new_bank_id``: what a bank being created may be called (existing banks are never
    re-checked). A NUL is a control character: refused here, where Hindsight's database answers 500."""
    if not bank_id:
        raise ValueError("Bank id must not be empty")
    if len(bank_id.encode("utf-8", "surrogatepass")) > BANK_ID_MAX_BYTES:
        raise ValueError(f"Bank id is too long: at most {BANK_ID_MAX_BYTES} bytes of UTF-8 are allowed")
    if any(unicodedata.category(ch) == "Cc" for ch in bank_id):
        raise ValueError("Bank id must not contain control characters")
    if bank_id.startswith("_"):
        raise ValueError("Bank id must not start with '_': that prefix is reserved")


class DispositionIn(BaseModel):
    skepticism: int = Field(ge=1, le=5)
    literalism: int = Field(ge=1, le=5)
    empathy: int = Field(ge=1, le=5)


class BankIn(BaseModel):
    """``CreateBankRequest``'s profile fields (its config fields are checked as a config PATCH is)."""

    model_config = ConfigDict(extra="allow")
    name: str | None = None
    disposition: DispositionIn | None = None
    disposition_skepticism: int | None = Field(None, ge=1, le=5)
    disposition_literalism: int | None = Field(None, ge=1, le=5)
    disposition_empathy: int | None = Field(None, ge=1, le=5)
    mission: str | None = None
    background: str | None = None
    reflect_mission: str | None = None


class MemoryPatchIn(BaseModel):
    """``UpdateMemoryRequest``: what a memory ``PATCH`` may carry, and its rules."""

    text: str | None = None
    context: str | None = None
    occurred_start: str | None = None
    occurred_end: str | None = None
    mentioned_at: str | None = None
    fact_type: str | None = None
    entities: list[str] | None = None
    resolve_entities: bool = True
    state: str | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _an_edit(self) -> MemoryPatchIn:
        dates = {"occurred_start", "occurred_end", "mentioned_at"}
        edits = ("text", "context", *sorted(dates), "fact_type", "entities", "state")
        if all(getattr(self, k) is None for k in edits) and not dates & self.model_fields_set:
            raise ValueError("Provide at least one field to update.")
        if self.state is not None and self.state not in ("valid", "invalidated"):
            raise ValueError("state must be 'valid' or 'invalidated'.")
        if self.fact_type is not None and self.fact_type not in ("world", "experience"):
            raise ValueError("fact_type must be 'world' or 'experience'.")
        return self


class StoredItem(MemoryItem):
    """An item as a server behind governance takes it (the self-hosted store, the Mem0 shim):
    Hindsight's rule on blank content as well."""

    @field_validator("content")
    @classmethod
    def _require_content(cls, v: str | list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        # Hindsight's rule: blank text is no content; a block list needs a non-blank text block or
        # an attachment (image / file) block.
        if isinstance(v, str):
            if not v.strip():
                raise ValueError("content cannot be empty")
            return v
        attachments = any(b.get("type") in ("image", "file") for b in v)
        texts = any(isinstance(b.get("text"), str) and b["text"].strip() for b in v if b.get("type") == "text")
        if not (attachments or texts):
            raise ValueError("content cannot be empty")
        return v


class RetainIn(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    items: list[StoredItem]
    is_async: bool = Field(False, alias="async")
    document_tags: list[str] | None = None
