from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from memwarden.settings import Settings, SettingsError, load_settings

REPO = Path(__file__).resolve().parents[2]


def test_defaults_without_file_or_environment() -> None:
    s = load_settings(environ={})
    assert s.backend == "local"
    assert (s.server.host, s.server.port) == ("127.0.0.1", 8890)
    assert s.data_dir == Path("./memwarden-data")


def test_file_then_environment_then_overrides(tmp_path: Path) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text('backend = "hindsight"\n[server]\nport = 9000\n[backends.hindsight]\nurl = "http://h:1"\n')
    env = {"MEMWARDEN_SERVER__PORT": "9100", "MEMWARDEN_BACKENDS__HINDSIGHT__READ_TIMEOUT": "12.5"}
    s = load_settings(config_file=cfg, environ=env, overrides={"server": {"host": "0.0.0.0"}})
    assert s.server.port == 9100
    assert s.server.host == "0.0.0.0"
    assert s.backends.hindsight.read_timeout == 12.5
    assert str(s.backends.hindsight.url) == "http://h:1/"


def test_the_command_lines_own_variables_are_no_settings() -> None:
    """``MEMWARDEN_API_KEY`` is the CLI's key: a server started in the same shell starts."""
    env = {"MEMWARDEN_API_KEY": "mwk_x", "MEMWARDEN_SCREENSHOTS": "/tmp/s", "MEMWARDEN_SERVER__PORT": "9002"}
    assert load_settings(environ=env).server.port == 9002


def test_memwarden_config_variable_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text("[server]\nport = 9001\n")
    assert load_settings(environ={"MEMWARDEN_CONFIG": str(cfg)}).server.port == 9001


def test_settings_are_frozen() -> None:
    s = load_settings(environ={})
    with pytest.raises(ValueError, match="frozen"):
        s.server.port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ("bogus = 1\n", {}, "unknown key 'bogus'"),
        ("[server]\nprot = 1\n", {}, "unknown key 'server.prot'"),
        ("[server]\nport = 'eighty'\n", {}, "'server.port'"),
        ("[server]\nport = 70000\n", {}, "'server.port'"),
        ("", {"MEMWARDEN_SERVER__PORTT": "1"}, "unknown key 'server.portt'"),
        ("", {"MEMWARDEN_BACKEND": "mongodb"}, "'backend'"),
        ('[backends.hindsight]\nurl = "not a url"\n', {}, "'backends.hindsight.url'"),
        ('[backends.hindsight]\nurl = "http://h:1/?x=1"\n', {}, "query or fragment"),
        ('[llm]\napi_key = "sk-1"\n', {}, "'llm.api_key': the key is never put in the configuration"),
        ("", {"MEMWARDEN_LLM__API_KEY": "sk-1"}, "name the environment variable that holds it in llm.api_key_env"),
        ('[llm]\nbase_url = "http://h:1/v1"\n', {}, "llm.base_url needs llm.model"),
        ('[llm]\nbase_url = "http://h/v1"\nmodel = "m"\napi_key_env = "K"\n', {}, "names K, which is not set"),
        ('[llm]\napi_key_env = "MEMWARDEN_KEY"\n', {}, "'llm.api_key_env'"),
        ('[llm]\nbase_url = "http://u:sk-1@h/v1"\nmodel = "m"\n', {}, "must not carry credentials"),
        ('[llm]\napi_key_env = "not a name"\n', {}, "'llm.api_key_env'"),
    ],
)
def test_bad_values_stop_start_up_naming_the_key(tmp_path: Path, toml: str, env: dict[str, str], message: str) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text(toml)
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace("?", r"\?")):
        load_settings(config_file=cfg, environ=env)


def test_malformed_toml_is_a_clear_error(tmp_path: Path) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text("[server\nport = 1\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(config_file=cfg, environ={})


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="config file not found"):
        load_settings(config_file=tmp_path / "nope.toml", environ={})


def _leaves(model: type[BaseModel], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.update(_leaves(ann, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = field.get_default(call_default_factory=True)
    return out


def _flatten(table: dict[str, object], prefix: str = "", leaves: frozenset[str] = frozenset()) -> dict[str, object]:
    """Dotted keys; a table is a value when it is empty or ``leaves`` names it (a dict setting)."""
    out: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict) and value and f"{prefix}{key}" not in leaves:
            out.update(_flatten(value, f"{prefix}{key}.", leaves))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _commented_example() -> dict[str, object]:
    """config.example.toml with every ``# key = value`` line un-commented."""
    setting = re.compile(r"^# ([a-z][a-z0-9_]* = .+)$")
    lines = []
    for line in (REPO / "config.example.toml").read_text().splitlines():
        match = setting.match(line)
        lines.append(match.group(1) if match else line)
    return tomllib.loads("\n".join(lines))


def test_config_example_documents_every_key_with_its_default() -> None:
    model = _leaves(Settings)
    example = _flatten(_commented_example(), leaves=frozenset(model))
    assert sorted(example) == sorted(model), "config.example.toml and the settings model differ in keys"
    for key, default in model.items():
        shown = example[key]
        if default is None:
            assert shown == "", f"{key}: unset defaults are shown as an empty string"
        elif isinstance(default, Path):
            assert Path(str(shown)) == default, key
        else:
            assert shown == default, f"{key}: example says {shown!r}, default is {default!r}"


def test_config_example_loads_as_a_config_file(tmp_path: Path) -> None:
    # The example with its values un-commented must itself be a valid configuration (empty strings
    # stand for "unset" and are dropped).
    def drop_empty(table: dict[str, object]) -> dict[str, object]:
        return {
            k: drop_empty(v) if isinstance(v, dict) else v  # type: ignore[arg-type]
            for k, v in table.items()
            if v != ""
        }

    assert load_settings(environ={}, overrides=drop_empty(_commented_example())) == load_settings(environ={})


def test_governance_overrides_per_bank_and_rule_extensions(tmp_path: Path) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text(
        '[governance]\nmode = "shadow"\nextra_rules = [{ id = "custom.jira", reason = "ticket chatter", '
        'patterns = ["^jira-\\\\d+ moved"] }]\n[governance.banks.prod]\nmode = "enforce"\nsecrets = "redact"\n'
    )
    g = load_settings(config_file=cfg, environ={}).governance
    assert (g.mode_for("prod"), g.mode_for("other")) == ("enforce", "shadow")
    assert (g.secrets_for("prod"), g.secrets_for("other")) == ("redact", "reject")
    assert g.extra_rules[0].patterns == ["^jira-\\d+ moved"]


def test_a_broken_rule_pattern_stops_start_up(tmp_path: Path) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text('[governance]\nextra_rules = [{ id = "x", reason = "y", patterns = ["(unclosed"] }]\n')
    with pytest.raises(SettingsError, match=r"governance\.extra_rules\.0\.patterns.*not a valid regular expression"):
        load_settings(config_file=cfg, environ={})


def test_the_llm_key_comes_from_the_variable_the_config_names_and_is_never_shown(tmp_path: Path) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text('[llm]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\napi_key_env = "OPENAI_API_KEY"\n')
    s = load_settings(config_file=cfg, environ={"OPENAI_API_KEY": "sk-very-secret"})
    assert s.llm.api_key() == "sk-very-secret"
    for shown in (repr(s), str(s), s.model_dump_json(), repr(s.model_dump())):
        assert "sk-very-secret" not in shown
    assert load_settings(environ={}).llm.base_url is None  # no [llm]: no LLM
    assert load_settings(config_file=cfg, environ={"OPENAI_API_KEY": "x"}) != s
