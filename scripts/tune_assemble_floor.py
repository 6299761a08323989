"""How assemble's relevance floor trades recall for context size on a scenario file.

    python scripts/tune_assemble_floor.py ../shared/bench/fr-dev.json

For each floor: how many queries keep an expected answer in the assembled facts, and how many facts the
context holds on average. Runs in a temporary embedded store (the data file is only read)."""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from carnet.bootstrap.wiring import build
from carnet.services.memories.assemble import assemble, budgets
from carnet.services.memories.remember import NewMemory, remember
from carnet.settings.root import Settings

FLOORS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.55)


def main(path: str) -> None:
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        c = build(Settings(data_dir=Path(tmp) / "data", key_dir=Path(tmp) / "keys"))
        try:
            queries = []
            for tenant, tdata in spec["tenants"].items():
                for subject, sdata in tdata["subjects"].items():
                    for fact in sdata["facts"]:
                        at = datetime.fromisoformat(fact["at"].replace("Z", "+00:00"))
                        remember(c.deps, tenant=tenant, subject_id=subject, actor="tune",
                                 items=[NewMemory(text=fact["text"], occurred_at=at)])
                    queries += [(tenant, subject, q) for q in sdata["queries"]]
            for floor in FLOORS:
                hits = kept = 0
                for tenant, subject, q in queries:
                    b = budgets(c.deps, overrides={"min_relevance": floor})
                    ctx = assemble(c.deps, tenant=tenant, subject_id=subject, query=q["q"], budget=b)
                    texts = [r.memory.text.lower() for r in ctx.memories]
                    hits += any(e.lower() in t for t in texts for e in q["expect_any"])
                    kept += len(texts)
                print(f"floor {floor:.2f}: answer in context {hits}/{len(queries)}, "
                      f"mean facts {kept / len(queries):.1f}")
        finally:
            c.close()


if __name__ == "__main__":
    main(sys.argv[1])
