"""What the commands share: the settings, the options spelled the same everywhere, JSON output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memwarden.settings import Settings, SettingsError, load_settings

CONFIG_FILE_OPTION = click.option(
    "--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG)."
)
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
DATA_DIR_OPTION = click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Read this data directory directly (no server needed)."
)
CONFIG_OPTION = click.option(
    "--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG); its data_dir."
)


def settings(config: Path | None, overrides: dict[str, Any]) -> Settings:
    """The settings (file, environment, ``overrides``); a one-line error when they are wrong."""
    try:
        return load_settings(config_file=config, overrides=overrides)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


def echo_json(value: Any) -> None:
    """``value`` as indented JSON, the text as it is (not escaped)."""
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))
