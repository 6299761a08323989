"""Presidio is imported without its Hugging Face engine's ``transformers`` pipelines (seconds of every
process's start), and ``transformers`` still imports afterwards for whoever needs it (the [st] extra)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from carnet.adapters.pii.unimported import without


def test_presidio_is_imported_without_transformers_which_still_imports_after() -> None:
    pytest.importorskip("transformers")  # installed with the test tools ([st]): what the module is for
    code = ("import sys\n"
            "import carnet.adapters.pii.presidio\n"
            "assert 'transformers' not in sys.modules, sorted(m for m in sys.modules if 'transformers' in m)\n"
            "import transformers\n"
            "print(transformers.__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "transformers"


def test_a_module_already_imported_is_left_alone() -> None:
    import json

    with without("json"):
        import json as again
    assert again is json and sys.modules["json"] is json


def test_inside_the_import_fails_and_after_it_works() -> None:
    code = ("import sys\n"
            "from carnet.adapters.pii.unimported import without\n"
            "assert 'wave' not in sys.modules\n"
            "with without('wave'):\n"
            "    try:\n"
            "        import wave\n"
            "    except ImportError:\n"
            "        print('refused')\n"
            "import wave\n"
            "print(wave.__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", "wave"]
