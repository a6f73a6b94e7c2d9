"""The dashboard's paths in memwarden's OpenAPI document: the page and its assets (``/warden/ui``,
open: they hold no data) and the read endpoints it added to ``/warden/v1`` (the banks, a bank's
overview)."""

from __future__ import annotations

from memwarden.fronts.admin.queries import OverviewQuery
from memwarden.fronts.openapi_paths import BANK, WBANK, Json, W, json_answer, listing, operation, param
from memwarden.fronts.query import openapi_parameters


def _html(description: str) -> Json:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


def dashboard_paths() -> dict[str, Json]:
    counts = {"type": "object", "additionalProperties": {"type": "integer"}}
    bank_summary = {
        "type": "object",
        "properties": {
            "bank_id": {"type": "string"},
            "by_status": counts,
            "total": {"type": "integer"},
            "last_recorded_at": {"type": ["string", "null"]},
        },
    }
    cell = {
        "type": "object",
        "properties": {
            "topic": {"type": ["string", "null"]},
            "stage": {"type": ["string", "null"]},
            "count": {"type": "integer"},
        },
    }
    day = {
        "type": "object",
        "properties": {"day": {"type": "string"}, "recorded": {"type": "integer"}, "total": {"type": "integer"}},
    }
    overview = {
        "type": "object",
        "properties": {
            "bank_id": {"type": "string"},
            "total": {"type": "integer"},
            "by_status": counts,
            "matrix_statuses": {"type": "array", "items": {"type": "string"}},
            "matrix": {"type": "array", "items": cell},
            "growth": {"type": "array", "items": day},
            "review_queue": {"type": "integer"},
            "last_config_change": {"type": ["object", "null"]},
        },
    }
    asset = param("asset", "path", {"type": "string"}, "A file of the dashboard (HTML, CSS, JavaScript modules)")
    return {
        "/warden/ui": {
            "get": operation(
                "warden_ui_redirect",
                "The dashboard (redirects to /warden/ui/)",
                _html("Redirect"),
                ok_status=307,
                open_route=True,
            )
        },
        "/warden/ui/": {"get": operation("warden_ui", "The dashboard's page", _html("The page"), open_route=True)},
        "/warden/ui/{asset}": {
            "get": operation(
                "warden_ui_asset",
                "One of the dashboard's files",
                {"description": "The file (CSS or JavaScript)", "content": {"text/css": {}, "text/javascript": {}}},
                params=(asset,),
                errors={404: "No such file"},
                open_route=True,
            )
        },
        f"{W}/banks": {
            "get": operation(
                "warden_list_banks",
                "Every bank the ledger has met, with its memories by status (admin on every bank)",
                listing(bank_summary, "Banks", total={"type": "integer"}),
            )
        },
        f"{WBANK}/overview": {
            "get": operation(
                "warden_bank_overview",
                "A bank at a glance: by status, topic × stage, growth per day, review queue, last config change",
                json_answer(overview, "The overview"),
                params=(BANK, *openapi_parameters(OverviewQuery)),
                errors={422: "days out of 1..366, or an unknown status"},
            )
        },
    }
