"""What a retain's items say of themselves that governance reads before it records them: metadata
reserved to the Mem0 front, and the client's documents they retain again (replacing them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.governance.errors import Invalid

# Metadata keys the Mem0 front writes (a memory's Mem0 id, created time, role, name, metadata): what
# makes a row that memory for every Mem0 read, update and delete — so no other front may send them.
RESERVED_METADATA = "mem0_"


def check_reserved_metadata(items: Sequence[Mapping[str, Any]]) -> None:
    """Raise :class:`~memwarden.governance.errors.Invalid` (422, nothing written) when an item's
    metadata holds a key reserved to the Mem0 front."""
    for n, item in enumerate(items):
        metadata = item.get("metadata")
        if not isinstance(metadata, Mapping):
            continue
        reserved = sorted(k for k in metadata if isinstance(k, str) and k.casefold().startswith(RESERVED_METADATA))
        if reserved:
            raise Invalid(
                f"items[{n}].metadata has {len(reserved)} key(s) starting with '{RESERVED_METADATA}', reserved to"
                " memwarden's Mem0 front (they name a Mem0 memory); nothing was written"
            )


def replaced_documents(items: Sequence[Mapping[str, Any]]) -> set[str]:
    """The client's document ids these items retain again, replacing them (not ``update_mode:
    "append"``)."""
    return {
        item["document_id"]
        for item in items
        if isinstance(item.get("document_id"), str) and item.get("update_mode") != "append"
    }
