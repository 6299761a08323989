"""Queued intakes sealed under the subject's data key, bound to the intake id.

Raw messages carry personal data in clear (they are what pseudonymisation works on), and so does
the subject id the worker needs. While they wait in the queue they are sealed like records:
AES-256-GCM under the subject's data key, associated data (tenant, subject hash, intake id,
``payload``). Erasing the subject destroys the key, so a queued or backed-up intake of an erased
subject can no longer be opened. A done intake keeps no payload at all.

The caller's session id (personal data as often as not: callers put phone numbers there) is sealed
on its own (field ``session_id``), as text (``enc1:`` + base64), because it outlives the payload:
a done intake still answers its status with it.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from carnet.crypto.envelope import Aad, header_key_id, open_text, seal
from carnet.crypto.keyring import Keyring
from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.intake import Message, Payload
from carnet.domain.records import Kind, Scope

_FIELD = "payload"
_SESSION = "session_id"
PREFIX = "enc1:"


class IntakeSealer:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def seal(self, scope: Scope, intake_id: str, payload: Payload) -> bytes:
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        return seal(dk.key, key_id=dk.key_id, aad=_aad(scope, intake_id),
                    plaintext=json.dumps(_to_json(payload), ensure_ascii=False))

    def reseal(self, scope: Scope, intake_id: str, payload: Payload, *, like: bytes) -> bytes:
        """``payload`` sealed under the key that sealed ``like`` (the intake as queued), never a new
        one: a worker staging its extraction outside the subject's lock must not create a key for a
        subject erased meanwhile (``KeyDestroyed`` instead; the erasure deleted the intake too)."""
        key_id = header_key_id(like)
        key = self._keyring.read_key(scope.tenant, scope.subject, key_id)
        return seal(key, key_id=key_id, aad=_aad(scope, intake_id),
                    plaintext=json.dumps(_to_json(payload), ensure_ascii=False))

    def open(self, scope: Scope, intake_id: str, sealed: bytes) -> Payload:
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(sealed))
        return _from_json(json.loads(open_text(key, aad=_aad(scope, intake_id), blob=sealed)))


    def seal_session(self, scope: Scope, intake_id: str, session_id: str | None) -> str | None:
        if session_id is None:
            return None
        dk = self._keyring.data_key(scope.tenant, scope.subject)
        blob = seal(dk.key, key_id=dk.key_id, aad=_aad(scope, intake_id, _SESSION), plaintext=session_id)
        return PREFIX + base64.b64encode(blob).decode("ascii")

    def open_session(self, scope: Scope, intake_id: str, stored: str | None) -> str | None:
        """The session id; one stored before session ids were sealed reads back as it is."""
        if stored is None or not stored.startswith(PREFIX):
            return stored
        blob = base64.b64decode(stored[len(PREFIX):])
        key = self._keyring.read_key(scope.tenant, scope.subject, header_key_id(blob))
        return open_text(key, aad=_aad(scope, intake_id, _SESSION), blob=blob)


def _aad(scope: Scope, intake_id: str, name: str = _FIELD) -> Aad:
    return Aad(scope.tenant, scope.subject, f"~intake:{intake_id}", name)


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def _at(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _to_json(p: Payload) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "subject_id": p.subject_id,
        "messages": [{"role": m.role, "content": m.content, "at": _iso(m.at)} for m in p.messages],
    }
    if p.extraction is not None:
        doc["extraction"] = {
            "facts": [{"text": f.text, "category": f.category, "importance": f.importance,
                       "valid_from": _iso(f.valid_from), "kind": f.kind.value} for f in p.extraction.facts],
            "episode": p.extraction.episode,
        }
    return doc


def _from_json(d: dict[str, Any]) -> Payload:
    extraction = None
    if (e := d.get("extraction")) is not None:
        extraction = Extraction(
            facts=tuple(ExtractedFact(f["text"], f["category"], f["importance"], _at(f["valid_from"]), Kind(f["kind"]))
                        for f in e["facts"]),
            episode=e["episode"])
    messages = tuple(Message(m["role"], m["content"], _at(m["at"])) for m in d["messages"])
    return Payload(d["subject_id"], messages, extraction)
