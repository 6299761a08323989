"""scripts/bundle.py, the air-gapped bundle's builder, loaded as a module (it is a script, not a package)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bundle.py"
BUNDLE_VENV = "site-venv"  # beside the bundle's archive (tests/conftest.py): the venv its build installed to check it


@cache
def bundle_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("carnet_bundle_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
