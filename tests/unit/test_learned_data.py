"""The shipped learned weights were trained on the data as it is now.

Each model records the SHA-256 of the rows it was trained and chosen on (``data.sha256`` in
``policies/learned_model.json`` and ``policies/injection_model.json``). A set added to or edited in
``tests/data`` without retraining changes that digest, and these tests fail, naming the command that
retrains — in a second, where reproducing the weights (``scripts/train_learned.py --check``: ~6
minutes of CPU; ``scripts/train_injection.py --check``: ~4) is done by hand.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _script(name: str) -> ModuleType:
    scripts = str(REPO / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)  # train_injection imports train_learned by name
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shipped(name: str) -> dict[str, object]:
    return json.loads((REPO / "policies" / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_keep_layers_weights_were_trained_on_the_data_as_it_is() -> None:
    trainer = _script("train_learned")
    shipped = _shipped("learned_model.json")["data"]
    assert isinstance(shipped, dict)
    now = trainer.data_digest(*trainer.training_data())
    assert now == shipped["sha256"], (
        "tests/data changed since policies/learned_model.json was trained: run python scripts/train_learned.py"
    )


def test_the_injection_checks_weights_were_trained_on_the_data_as_it_is() -> None:
    trainer = _script("train_injection")
    shipped = _shipped("injection_model.json")
    names = trainer.tune_names()
    assert names == shipped["writers"]
    data = shipped["data"]
    assert isinstance(data, dict)
    tune, harmless, conversation = trainer.learning_rows(names)
    assert len(tune) + len(harmless) == data["rows"]
    assert trainer.data_digest(names, tune, harmless, conversation) == data["sha256"], (
        "tests/data changed since policies/injection_model.json was trained: run python scripts/train_injection.py"
    )
