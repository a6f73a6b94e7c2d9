"""memwarden's settings: one frozen object, built once at start-up.

Sources, later wins: the model's defaults, the TOML file (``--config`` or ``MEMWARDEN_CONFIG``),
``MEMWARDEN_*`` environment variables (``__`` separates nesting levels, e.g.
``MEMWARDEN_BACKENDS__HINDSIGHT__URL``), then command-line flags. An unknown key or a value of the
wrong type stops start-up with a :class:`SettingsError` that names the key. Nothing reads
``os.environ`` after :func:`load_settings` returns.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError

from memwarden.settings.database import (
    DatabaseSettings as DatabaseSettings,
)
from memwarden.settings.governance import (
    BankGovernance as BankGovernance,
)
from memwarden.settings.governance import (
    GovernanceSettings as GovernanceSettings,
)
from memwarden.settings.governance import (
    QualityRuleSettings as QualityRuleSettings,
)
from memwarden.settings.sections import (
    ENV_PREFIX as ENV_PREFIX,
)
from memwarden.settings.sections import (
    ENV_RESERVED as ENV_RESERVED,
)
from memwarden.settings.sections import (
    AuditSettings as AuditSettings,
)
from memwarden.settings.sections import (
    BackendsSettings as BackendsSettings,
)
from memwarden.settings.sections import (
    ConfigGuardSettings as ConfigGuardSettings,
)
from memwarden.settings.sections import (
    HindsightSettings as HindsightSettings,
)
from memwarden.settings.sections import (
    LabelEntry as LabelEntry,
)
from memwarden.settings.sections import (
    LabelsSettings as LabelsSettings,
)
from memwarden.settings.sections import (
    LlmSettings as LlmSettings,
)
from memwarden.settings.sections import (
    LocalSettings as LocalSettings,
)
from memwarden.settings.sections import (
    Mem0Settings as Mem0Settings,
)
from memwarden.settings.sections import (
    MissionSettings as MissionSettings,
)
from memwarden.settings.sections import (
    OutboxSettings as OutboxSettings,
)
from memwarden.settings.sections import (
    PlanSettings as PlanSettings,
)
from memwarden.settings.sections import (
    RetentionSettings as RetentionSettings,
)
from memwarden.settings.sections import (
    ServerSettings as ServerSettings,
)
from memwarden.settings.sections import (
    SettingsError as SettingsError,
)
from memwarden.settings.sections import (
    _Section as _Section,
)


class Settings(_Section):
    """Everything memwarden can be told. ``config.example.toml`` documents each key."""

    backend: Literal["local", "hindsight", "mem0"] = Field(
        "local",
        description='"local": memwarden is the memory server; "hindsight": govern a Hindsight server; "mem0": govern'
        " Mem0's open-source REST server.",
    )
    data_dir: Path = Field(Path("./memwarden-data"), description="Where memwarden keeps its data.")
    server: ServerSettings = Field(default_factory=ServerSettings)  # type: ignore[arg-type]
    backends: BackendsSettings = Field(default_factory=BackendsSettings)
    governance: GovernanceSettings = Field(default_factory=GovernanceSettings)  # type: ignore[arg-type]
    config_guard: ConfigGuardSettings = Field(default_factory=ConfigGuardSettings)  # type: ignore[arg-type]
    local: LocalSettings = Field(default_factory=LocalSettings)  # type: ignore[arg-type]
    retention: RetentionSettings = Field(default_factory=RetentionSettings)  # type: ignore[arg-type]
    plans: PlanSettings = Field(default_factory=PlanSettings)  # type: ignore[arg-type]
    outbox: OutboxSettings = Field(default_factory=OutboxSettings)  # type: ignore[arg-type]
    labels: LabelsSettings = Field(default_factory=LabelsSettings)  # type: ignore[arg-type]
    audit: AuditSettings = Field(default_factory=AuditSettings)  # type: ignore[arg-type]
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)  # type: ignore[arg-type]
    llm: LlmSettings = Field(default_factory=LlmSettings)  # type: ignore[arg-type]
    mem0: Mem0Settings = Field(default_factory=Mem0Settings)  # type: ignore[arg-type]


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _env_value(raw: str) -> Any:
    # Lists and tables come as JSON; scalars stay strings and pydantic coerces them ("8890" -> 8890).
    if raw[:1] in "[{":
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in ENV_RESERVED:
            continue
        path = name[len(ENV_PREFIX) :].lower().split("__")
        node = tree
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SettingsError(f"environment variable {name} conflicts with another MEMWARDEN_ variable")
        node[path[-1]] = _env_value(raw)
    return tree


# Keys whose values may be secrets: an error about one names the key, never the value.
SECRET_KEY = re.compile(r"^database\.url$|api_key|password|secret|token")


def _describe(exc: ValidationError, origin: str) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            lines.append(f"unknown key '{key}'")
        elif SECRET_KEY.search(key):  # a password or a key is never repeated back (logs, terminals)
            lines.append(f"'{key}': {err['msg']}")
        else:
            lines.append(f"'{key}': {err['msg']} (got {err.get('input')!r})")
    return f"invalid configuration ({origin}): " + "; ".join(lines)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML config file, turning every failure into a :class:`SettingsError`."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SettingsError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read config file {path}: {exc}") from None


def load_settings(
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build the settings from file, environment and explicit overrides (command-line flags).

    ``config_file`` falls back to ``MEMWARDEN_CONFIG``; with neither, only defaults and the
    environment apply.
    """
    env = os.environ if environ is None else environ
    if config_file is None and env.get("MEMWARDEN_CONFIG"):
        config_file = Path(env["MEMWARDEN_CONFIG"])
    data: dict[str, Any] = {}
    origin = "defaults"
    if config_file is not None:
        data = read_toml(config_file)
        origin = str(config_file)
    env_tree = _from_env(env)
    if env_tree:
        data = _merge(data, env_tree)
        origin += " + MEMWARDEN_* environment"
    if overrides:
        data = _merge(data, overrides)
        origin += " + command line"
    llm = data.get("llm")
    if isinstance(llm, Mapping) and "api_key" in llm:
        raise SettingsError(
            f"invalid configuration ({origin}): 'llm.api_key': the key is never put in the configuration;"
            " name the environment variable that holds it in llm.api_key_env"
        )
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, origin)) from None
    name = settings.llm.api_key_env
    if name is not None:
        if not env.get(name):
            raise SettingsError(f"llm.api_key_env names {name}, which is not set (or empty) in the environment")
        settings.llm._api_key = SecretStr(env[name])
    return settings
