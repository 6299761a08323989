"""The concurrent assistants: each one, for its tenant, works on a few subjects of its own (no two
assistants share a subject, so what one sees is fully explained by what it did) with the mix of a
call center's day: remember, messages (a call to extract), assemble, search, forget, export, legal
hold (and an erasure refused under it), erasure (then a new subject), and a look at another tenant's
subject (which must be 404).

A write that got no answer, a 503 or a 429 is sent again with the same ``Idempotency-Key`` until it
gets one (bounded): what Carnet promises a retrying client is exactly what the soak checks.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from typing import Any

from carnet.bench.soak.client import Answer, RoundRobin
from carnet.bench.soak.ledger import Ledger, Subject, new_marker

RETRY_FOR_S = 120.0  # a write is retried this long (longer than any fault window)
_SUBJECTS_EACH = 3
_MIX = {"remember": 25, "messages": 12, "search": 20, "assemble": 15, "forget": 5, "export": 5, "hold": 3,
        "erase": 5, "cross": 10}
_PREFERENCES = ["préfère être appelé le mardi matin", "souhaite recevoir ses courriers par voie postale",
                "demande un rappel après 18 heures", "a signalé un dégât des eaux dans la cuisine",
                "veut résilier l'option assistance", "a changé de banque le mois dernier",
                "attend le passage de l'expert jeudi", "préfère les échanges par courriel",
                "a un deuxième véhicule à assurer", "déménage en janvier à Lyon"]
# The order in which an assistant does, at the end, what it never did: writes first (a call to extract), a
# legal hold before a forget (both need a live memory), the erasure last (it replaces the subject).
OWED = ("remember", "messages", "search", "assemble", "export", "hold", "cross", "forget", "erase")
assert sorted(OWED) == sorted(_MIX)
_QUERIES = ["Quand l'appeler ?", "Quelles sont ses préférences ?", "Où habite-t-il ?", "Que s'est-il passé ?"]


@dataclass(frozen=True)
class Keys:
    agent: str
    dpo: str


class Assistant(threading.Thread):
    def __init__(self, *, name: str, tenant: str, keys: Keys, other_tenant: str, http: RoundRobin,
                 ledger: Ledger, stop: threading.Event, seed: int) -> None:
        super().__init__(name=name, daemon=True)
        self.tenant, self.keys, self.other, self.http, self.ledger = tenant, keys, other_tenant, http, ledger
        self._stop_event, self._rng, self._serial = stop, random.Random(seed), 0
        self.done: Counter[str] = Counter()  # actions done, by kind
        self.subjects = [self._new_subject() for _ in range(_SUBJECTS_EACH)]

    def _new_subject(self) -> Subject:
        self._serial += 1
        return self.ledger.subject(self.tenant, f"{self.name}-{self._serial}")

    def run(self) -> None:
        actions, weights = list(_MIX), list(_MIX.values())
        while not self._stop_event.is_set():
            action = self._rng.choices(actions, weights)[0]
            self._act(action, self._rng.choice(self.subjects))
            time.sleep(self._rng.uniform(0.02, 0.1))  # think time between an assistant's calls
        # On a busy machine fewer requests fit in the run: an action drawn rarely (an erasure, a legal hold)
        # may never have come. Each one this assistant has not done is done now, so the checks at the end
        # never lack the work they check (``verdict``: every kind of action ran).
        for action in OWED:
            if not self.done[action]:
                self._act(action, self._with_a_memory())

    def _with_a_memory(self) -> Subject:
        """A subject with a live memory (a legal hold and a forget need one), remembered first if none has."""
        live = [s for s in self.subjects if s.live_memories]
        if not live:
            self._act("remember", self.subjects[0])
            live = [s for s in self.subjects if s.live_memories] or self.subjects[:1]
        return live[0]

    def _act(self, action: str, subject: Subject) -> None:
        try:
            if getattr(self, f"_{action}")(subject) is not False:  # False: nothing to do it on yet
                self.done[action] += 1
        except (KeyError, TypeError, AttributeError) as exc:  # an answer of an unexpected shape: counted
            self.ledger.violation(f"malformed_answer:{action}", subject=subject.id, error=repr(exc))

    def _retry(self, method: str, route: str, path: str, *, key: str, json: Any = None,
               headers: dict[str, str] | None = None, done: tuple[int, ...] = ()) -> Answer:
        """Until an answer that is not retryable (or in ``done``: a retry's 404 after an erasure)."""
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            answer = self.http.send(method, route, path, key=key, json=json, headers=headers)
            if not answer.retryable or answer.status in done or time.monotonic() > deadline:
                return answer
            time.sleep(0.5)  # back off before the same request again

    def _remember(self, s: Subject) -> None:
        marker = new_marker()
        text = f"Le membre {self._rng.choice(_PREFERENCES)} (note {marker})."
        key = str(uuid.uuid4())
        answer = self._retry("POST", "remember", f"/api/v1/subjects/{s.id}/memories", key=self.keys.agent,
                             json={"text": text}, headers={"Idempotency-Key": key})
        if answer.status != 201:
            self._unexpected("remember", s, answer)
            return
        memory_id = answer.body["memory"]["id"]
        self.ledger.owns(self.tenant, s.id, memory_id, marker)
        s.memories.add(memory_id)
        again = self.http.send("POST", "remember", f"/api/v1/subjects/{s.id}/memories", key=self.keys.agent,
                               json={"text": text}, headers={"Idempotency-Key": key}) \
            if self._rng.random() < 0.2 else None  # a client's blind replay: one record, the same id
        if again is not None and again.ok and again.body["memory"]["id"] != memory_id:
            self.ledger.violation("replay_new_record", subject=s.id, first=memory_id,
                                  replay=again.body["memory"]["id"])

    def _messages(self, s: Subject) -> None:
        marker = new_marker()
        call = {"session_id": f"call-{uuid.uuid4().hex[:8]}", "messages": [
            {"role": "advisor", "content": "Quelle est votre nouvelle adresse ?"},
            {"role": "user", "content": f"J'habite maintenant au {self._rng.randint(2, 99)} rue des Lilas, "
                                        f"67000 Strasbourg, dossier {marker}."}]}
        key = str(uuid.uuid4())
        path = f"/api/v1/subjects/{s.id}/messages"
        answer = self._retry("POST", "messages", path, key=self.keys.agent, json=call,
                             headers={"Idempotency-Key": key})
        if answer.status != 202:
            self._unexpected("messages", s, answer)
            return
        self.ledger.owns(self.tenant, s.id, marker)
        s.intakes.append(answer.body["intake_id"])
        if not self.ledger.intake(self.tenant, s.id, answer.body["intake_id"]):
            self.ledger.violation("intake_of_another_subject", subject=s.id, intake=answer.body["intake_id"])

    def _read(self, route: str, method: str, path: str, s: Subject, key: str, json: Any = None) -> None:
        answer = self.http.send(method, route, path, key=key, json=json)
        if answer.ok:
            self.ledger.inspect(self.tenant, s.id, route, answer.body)
        elif answer.status == 404 and s.live_memories:
            self.ledger.violation("live_subject_not_found", route=route, subject=s.id)

    def _search(self, s: Subject) -> None:
        self._read("search", "POST", f"/api/v1/subjects/{s.id}/search", s, self.keys.agent,
                   {"query": self._rng.choice(_QUERIES)})

    def _assemble(self, s: Subject) -> None:
        self._read("assemble", "POST", "/api/v1/context/assemble", s, self.keys.agent,
                   {"subject_id": s.id, "query": self._rng.choice(_QUERIES)})

    def _export(self, s: Subject) -> None:
        answer = self.http.send("GET", "export", f"/api/v1/subjects/{s.id}/export", key=self.keys.dpo)
        if answer.ok:
            self.ledger.inspect(self.tenant, s.id, "export", answer.body)
            if isinstance(answer.body, dict) and answer.body.get("complete") is not True:
                self.ledger.violation("export_incomplete", subject=s.id, tail=answer.body.get("error"))

    def _forget(self, s: Subject) -> bool:
        live = sorted(s.live_memories)
        if not live:
            return False
        memory_id = self._rng.choice(live)
        answer = self._retry("DELETE", "forget", f"/api/v1/subjects/{s.id}/memories/{memory_id}",
                             key=self.keys.agent, done=(404,))
        if answer.status in (204, 404):
            s.forgotten.add(memory_id)
        else:
            self._unexpected("forget", s, answer)
        return True

    def _hold(self, s: Subject) -> bool:
        if not s.live_memories:
            return False  # a subject Carnet has never seen has no retention to hold
        path = f"/api/v1/subjects/{s.id}/legal-hold"
        held = self._retry("PUT", "legal-hold", path, key=self.keys.dpo, json={"reference": "LIT-SOAK"})
        if not held.ok:
            self._unexpected("legal-hold", s, held)
            return True
        refused = self._retry("DELETE", "erase", f"/api/v1/subjects/{s.id}", key=self.keys.dpo)
        if refused.ok:
            self.ledger.violation("erased_under_hold", subject=s.id)
            self._erased(s)
            return True
        if refused.status != 409 or refused.code != "legal_hold":
            self._unexpected("erase", s, refused)
        lifted = self._retry("DELETE", "legal-hold", path, key=self.keys.dpo)
        if not lifted.ok:
            self._unexpected("legal-hold", s, lifted)
        return True

    def _erase(self, s: Subject) -> None:
        """Until a complete receipt: a DPO's client asks again while the receipt lists a residue. The
        subject's intakes are looked at first: those still pending go with it (by design, not lost)."""
        for intake_id in s.intakes:
            seen = self.http.send("GET", "intake", f"/api/v1/intakes/{intake_id}", key=self.keys.agent)
            state = seen.body.get("status") if seen.ok and isinstance(seen.body, dict) else f"answer {seen.status}"
            self.ledger.seen_at_erasure(str(state))
        deadline = time.monotonic() + RETRY_FOR_S
        answer = self._retry("DELETE", "erase", f"/api/v1/subjects/{s.id}", key=self.keys.dpo, done=(404,))
        while answer.ok and not answer.body.get("complete"):
            s.hashes.add(answer.body["subject_hash"])
            s.incomplete = True
            self.ledger.violation("erasure_incomplete", subject=s.id, residue=answer.body.get("residue"))
            if time.monotonic() > deadline:
                break
            time.sleep(1.0)  # before asking again
            answer = self._retry("DELETE", "erase", f"/api/v1/subjects/{s.id}", key=self.keys.dpo, done=(404,))
        if answer.ok:
            s.hashes.add(answer.body["subject_hash"])
            if not answer.body.get("complete"):
                self.ledger.violation("erasure_left_incomplete", subject=s.id, receipt=answer.body)
            self._erased(s)
        elif answer.status == 404:
            self._erased(s)  # a retry of an erasure that had been done (or a subject never written)
        else:
            self._unexpected("erase", s, answer)

    def _erased(self, s: Subject) -> None:
        s.erased = True
        self.subjects[self.subjects.index(s)] = self._new_subject()

    def _cross(self, s: Subject) -> bool:
        """This tenant's agent key on a subject of the other tenant: 404, nothing shown. One with a live memory
        when there is one; otherwise any the other tenant's assistants named (they may all have been erased,
        or not written yet, when this one reaches its owed work: the key must see nothing there either)."""
        theirs = self.ledger.live_subjects(self.other) or self.ledger.subjects_of(self.other)
        if not theirs:
            return False
        target = self._rng.choice(theirs)
        answer = self.http.send("GET", "cross-tenant", f"/api/v1/subjects/{target.id}/memories",
                                key=self.keys.agent)
        if answer.ok and answer.body.get("items"):
            self.ledger.violation("cross_tenant", route="cross-tenant", tenant=self.tenant, subject=target.id,
                                  shown=len(answer.body["items"]))
        return True

    def _unexpected(self, route: str, s: Subject, answer: Answer) -> None:
        """An answer no retry turned into success (not an invariant: reported with the counts)."""
        self.ledger.violation(f"unexpected:{route}:{answer.status}:{answer.code}", subject=s.id)
