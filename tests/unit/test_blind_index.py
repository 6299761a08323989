import re

import pytest

from carnet.crypto.blind_index import blind_token, blind_tokens, normalize_identifier

K1 = b"\x01" * 32
K2 = b"\x02" * 32


def test_spellings_of_one_identifier_share_a_token() -> None:
    spellings = ["RC-2026-1184", "rc 2026 1184", "RC.2026/1184", "ＲＣ-2026-1184", " rc_2026-1184 "]
    assert {normalize_identifier(s) for s in spellings} == {"RC20261184"}
    assert len({blind_token(K1, s) for s in spellings}) == 1


def test_tokens_are_truncated_hex_keyed_per_tenant_and_distinct_per_identifier() -> None:
    token = blind_token(K1, "FR76 3000 6000 0112 3456 7890 189")
    assert re.fullmatch(r"[0-9a-f]{16}", token)
    assert blind_token(K2, "FR76 3000 6000 0112 3456 7890 189") != token  # another tenant's key
    assert blind_token(K1, "FR76 3000 6000 0112 3456 7890 188") != token
    assert "FR76" not in token and "3000" not in token


def test_tokens_of_a_record_are_sorted_without_repeats_and_skip_empty_values() -> None:
    got = blind_tokens(K1, ["TMP-55120", "RC-2026-1184", "rc-2026-1184", " - "])
    assert got == tuple(sorted({blind_token(K1, "TMP-55120"), blind_token(K1, "RC-2026-1184")}))
    with pytest.raises(ValueError):
        blind_token(K1, " -/ ")
