"""The rule-based extraction, message by message: sentences → filter → rewrite → classify → date.

For each message of the member ("user") or the call-center side ("assistant", "advisor"; "system"
messages are instructions, never facts):

1. put back the apostrophes a transcript left out (``elision``), split it into sentences and drop
   opening fillers (``sentences``);
2. a member's first sentence right after an advisor's question is read with it (``answers``);
3. questions are no facts (the member's still name the call's topic, and a request is kept:
   ``requests``); ritual clauses go, and what is left must carry information (``smalltalk``);
4. the statement is rewritten in the third person (``rewrite_fr``/``rewrite_en``), given a
   category and importance (``classify``) and a ``valid_from`` (``dates``); a French date said
   without its year ("le 22 avril", "vendredi, le 9", "hier") is written out in full (``years``);
5. a call made for the member (a guardian, a relative: ``proxy``) has the caller's "je" written
   "l'appelant", as the advisor's "vous", unless an operator relays the member's words (``relays``);
6. the same fact said twice in a call is kept once; a correction ("non pardon, c'est le 12") keeps
   only the corrected value (``corrections``); a verbless piece that continues the sentence before
   it ("J'ai signé un CDI. Cariste, à Yutz.") is joined to that fact (``fragments``); a fact whose
   words another fact of the call holds entirely is dropped (``repeats``);
7. what a speaker says in one message is one record (``turns``).

Deleted after measuring each rule leave-one-writer-out on the calls of seven writers
(docs/benchmarks.md, "Each extraction rule, measured"): the member's name read from a greeting (a
record of its own), and the file a call named given to a status note. Both were neutral or costly on
writers they were not written from.

For a session, the episode summary (``episode``) is built from the member's topics and the
advisor's decisions. Everything is pure Python regular expressions, a fraction of a millisecond
per message, no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from carnet.domain.extraction.model import ExtractedFact, Extraction
from carnet.domain.extraction.rules import answers, corrections, episode, fragments, proxy, turns
from carnet.domain.extraction.rules.classify import category, importance
from carnet.domain.extraction.rules.dates import valid_from
from carnet.domain.extraction.rules.elision import restore_apostrophes
from carnet.domain.extraction.rules.requests import request
from carnet.domain.extraction.rules.rewrite_en import rewrite_en
from carnet.domain.extraction.rules.rewrite_fr import rewrite_fr
from carnet.domain.extraction.rules.sentences import is_question, split_sentences, strip_fillers
from carnet.domain.extraction.rules.smalltalk import carries_information, without_ritual
from carnet.domain.extraction.rules.walk import ADVISOR, MEMBER
from carnet.domain.extraction.rules.years import with_years
from carnet.domain.intake import Message
from carnet.domain.text import content_tokens, exact_key

_ROLES = {"user": MEMBER, "member": MEMBER, "customer": MEMBER, "assistant": ADVISOR, "advisor": ADVISOR,
          "agent": ADVISOR}
_LONG = 300  # a sentence longer than this is cut at its semicolons (dictated notes run on)
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")
_SHORT_ANSWER = 5  # content words: an answer this short is read with the question it answers
_ASKS = re.compile(r"\?\s*$")  # a member's question is asked out loud: "Quand j'ai les mains prises…" is not one
# A member who asks to wait ("Oui, attendez…", "Un instant, je regarde.") has not answered yet; a
# sentence with more words than that says something of its own ("Attendez, j'ai le devis sous les yeux").
_HOLD_ON_WORDS = 2
_HOLD_ON = re.compile(
    r"^(?:(?:oui|ouais|alors|euh|bah|ben|bon|yes|ok|okay)[\s,.…]*)*(?:attendez|attends|un instant|une seconde|"
    r"un moment|deux secondes|voyons|je regarde|je cherche|hold on|wait|let me see|one moment|one second)\b"
    r"[^?]*$",
    re.IGNORECASE,
)
_ELLIPTIC = 1  # content words: a question this short is about the sentence before it ("De combien ?")


@dataclass(slots=True)
class _Call:
    english: bool
    facts: list[ExtractedFact] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    member_said: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    advisor_spoke: bool = False
    message_start: int = 0  # index in ``facts`` of the current message's first fact
    turn: int = 0  # the current message's number
    turns: list[int] = field(default_factory=list)  # per fact: its message's number (``turns``)
    proxy: bool = False  # the member's side is someone calling for the member (``proxy``)
    relay: bool = False  # an operator passes on the member's words (``proxy.relays``)
    dialogue: bool = False  # the advisor speaks in this call: the member's side is the caller, never relaying
    weight: float | None = None  # the turn filter's probability for the current message (``extract``'s ``weights``)
    # speaker → (statement, question, voice, index in ``facts``) of their last fact
    said: dict[str, tuple[str, str | None, str | None, int]] = field(default_factory=dict)

    def correct(self, fix: str, speaker: str, at: datetime | None) -> bool:
        """A sentence opening with a correction marker: the speaker's last fact, corrected."""
        last = self.said.get(speaker)
        corrected = corrections.apply(last[0], fix) if last is not None else None
        if last is None or corrected is None or corrected == last[0]:
            return False
        _, question, voice, index = last
        old = self.facts.pop(index)
        self.turns.pop(index)
        self.seen.discard(exact_key(old.text))
        if old.text in self.decisions:
            self.decisions.remove(old.text)
        for other, (st, q, v, i) in list(self.said.items()):
            if i > index:
                self.said[other] = (st, q, v, i - 1)
        self.add(corrected, speaker, at, question, voice)
        return True

    def _extend(self, index: int, fragment: str, speaker: str) -> None:
        """The fact at ``index`` continued by a verbless ``fragment`` of the same message."""
        old = self.facts[index]
        text = fragments.joined(old.text, fragment)
        self.seen.discard(exact_key(old.text))
        self.seen.add(exact_key(text))
        cat = category(text, advisor=speaker == ADVISOR)
        self.facts[index] = ExtractedFact(text=text, category=cat, importance=max(old.importance, self.weighed(
                                          importance(cat, text))),
                                          valid_from=old.valid_from)
        if old.text in self.decisions:
            self.decisions[self.decisions.index(old.text)] = text

    def continues(self, statement: str, speaker: str, at: datetime | None) -> bool:
        """A verbless piece after the speaker's fact of this same message extends that fact."""
        last = self.said.get(speaker)
        if last is None or last[3] < self.message_start or not (
            fragments.is_fragment(statement) or fragments.names_reference(statement)):
            return False
        if not content_tokens(_PLACEHOLDER.sub(" ", statement)) and not _PLACEHOLDER.search(statement):
            return False
        voice = last[2] or speaker
        text = self.rewritten(statement, voice)
        self._extend(last[3], self.dated(text, at), speaker)
        return True

    def rewritten(self, statement: str, voice: str) -> str:
        """``statement`` in the third person, as ``voice`` said it on this call (``proxy``, ``relay``)."""
        if self.english:
            return rewrite_en(statement, voice)
        return rewrite_fr(statement, voice, proxy=self.proxy, relay=self.relay)

    def weighed(self, rule_importance: float) -> float:
        """The rules' importance, or with the filter's probabilities its mean with the turn's."""
        return rule_importance if self.weight is None else round((rule_importance + self.weight) / 2, 4)

    def dated(self, text: str, at: datetime | None) -> str:
        """French dates said without their year get it (``years``)."""
        return text if self.english else with_years(text, at)

    def add(self, statement: str, speaker: str, at: datetime | None, question: str | None = None,
            voice: str | None = None) -> None:
        """``speaker`` said it (it decides the category); ``voice`` is whose words they are (it
        decides who "je" and "vous" are): the advisor's for a question confirmed by the member."""
        voice = voice or (ADVISOR if speaker == MEMBER and not self.dialogue and _relayed(statement) else speaker)
        said = self.rewritten(statement, voice)
        text = self.dated(said, at)
        if question is not None and len(content_tokens(text)) <= _SHORT_ANSWER:
            text = _with_question(text, question, english=self.english)
        key = exact_key(text)
        if key in self.seen:
            return
        self.seen.add(key)
        self.said[speaker] = (statement, question, voice, len(self.facts))
        cat = category(text, advisor=speaker == ADVISOR)
        self.turns.append(self.turn)
        self.facts.append(ExtractedFact(text=text, category=cat, importance=self.weighed(importance(cat, text)),
                                        valid_from=valid_from(statement, at)))
        if cat == "decision" and speaker == ADVISOR:
            self.decisions.append(text)


def extract(messages: Sequence[Message], *, session_id: str | None, locale: str,
            keep: Sequence[bool] | None = None, join_runs: bool = False,
            weights: Sequence[float] | None = None) -> Extraction:
    """``keep``: per message, whether it is read for facts (the learned turn filter's answer); a message
    not kept is still context (the question an answer is read with, the file a call names). With
    ``join_runs``, consecutive kept messages (an exchange about one thing: the contract, then its
    amount) are one record, as one message is (``turns``). ``weights``: per message, the filter's
    probability that it carries a fact; a fact's importance is then the mean of the rules' and its turn's."""
    call = _Call(english=locale.lower().startswith("en"))
    member_side = [m.content for m in messages if _ROLES.get(m.role.strip().lower()) == MEMBER]
    call.proxy = proxy.calls_for_someone(member_side)
    call.relay = proxy.relays(member_side)
    call.dialogue = any(_ROLES.get(m.role.strip().lower()) == ADVISOR for m in messages)
    question: str | None = None  # the advisor's last question, waiting for the member's answer
    asked_by_member: str | None = None  # the member's last question, waiting for the advisor's answer
    for index, message in enumerate(messages):
        speaker = _ROLES.get(message.role.strip().lower())
        if speaker is None:
            question = asked_by_member = None
            continue
        call.advisor_spoke |= speaker == ADVISOR
        sentences = _sentences(restore_apostrophes(message.content))
        call.message_start = len(call.facts)
        call.weight = weights[index] if weights is not None else None
        kept = keep is None or keep[index]
        if not (join_runs and kept and index > 0 and keep is not None and keep[index - 1]):
            call.turn += 1
        if not kept:
            question = _last_question(sentences) if speaker == ADVISOR else None
            asked_by_member = (_last_question(sentences) if speaker == MEMBER and _ASKS.search(message.content)
                               else None)
            continue
        waiting = question if speaker == MEMBER else None  # until the member's answer begins
        for n, said in enumerate(sentences):
            sentence = corrections.within(said)
            fix = corrections.opening(sentence)
            if fix is not None and call.correct(fix, speaker, message.at):
                continue
            asked = None
            if waiting is not None and _holds_on(said):
                continue  # "Oui, attendez…" then "057-2025-00841.": the answer is still to come
            if waiting is not None:
                question, waiting = waiting, None
                statement, rest = answers.answered(question, sentence)
                if statement is not None:  # the member's answer, in the advisor's words
                    _keep(call, statement, MEMBER, message.at, voice=ADVISOR)
                elif rest == sentence:
                    asked = question  # "Non, je préfère le 10." needs its question to mean anything
                sentence = rest
            elif speaker == ADVISOR and n == 0 and asked_by_member is not None:
                asked = asked_by_member  # "On paie combien ?" — "212,40 euros par mois exactement."
            _read(call, sentence, speaker, message.at, asked, continues=n > 0)
        question = _last_question(sentences) if speaker == ADVISOR else None
        asked_by_member = _last_question(sentences) if speaker == MEMBER and _ASKS.search(message.content) else None
    return Extraction(facts=turns.by_turn(call.facts, call.turns), episode=_episode(call, messages, session_id))


def _holds_on(sentence: str) -> bool:
    """The member asks to wait, and says nothing else ("Oui, attendez…", "Un instant, je regarde.")."""
    return _HOLD_ON.match(sentence) is not None and len(content_tokens(sentence)) <= _HOLD_ON_WORDS


def _sentences(content: str) -> list[str]:
    out: list[str] = []
    for sentence in split_sentences(content):
        if len(sentence) > _LONG:
            out.extend(p.strip() for p in sentence.split(";") if p.strip())
        else:
            out.append(sentence)
    return out


def _read(call: _Call, sentence: str, speaker: str, at: datetime | None, question: str | None = None, *,
          continues: bool = False) -> None:
    clean = strip_fillers(sentence)
    if not clean:
        return
    if is_question(clean):
        if speaker == MEMBER:
            call.member_said.append(clean)
            asked = request(clean)  # "Est-ce que je peux décaler l'échéance ?" asks for something
            if asked is not None:
                _keep(call, asked, speaker, at)
        return
    _keep(call, clean, speaker, at, question, continues=continues)


def _keep(call: _Call, statement: str, speaker: str, at: datetime | None, question: str | None = None,
          voice: str | None = None, *, continues: bool = False) -> None:
    clean = strip_fillers(without_ritual(strip_fillers(statement)))
    if not clean:
        return
    if continues and call.continues(clean, speaker, at):  # "…acheté une maison. À Annecy.": one fact
        return
    answer = question is not None and _PLACEHOLDER.search(clean) is not None  # "<ADDRESS_1>." answers "et l'adresse ?"
    if not (answer or carries_information(clean, advisor=speaker == ADVISOR)):
        return
    if speaker == MEMBER and voice is None:  # the call's topics are what the member brought up
        call.member_said.append(clean)
    call.add(clean, speaker, at, question, voice)


# A "user" message may be the advisor relaying the member ("Elle conteste le remboursement", "On lui
# a envoyé l'attestation"): no first person singular, the member in the third person. There "on",
# "nous" and "vous" are the call-center side, as in the advisor's own words. Only where no advisor
# speaks (notes sent as messages): in a dialogue the member's side is the caller, whose "on" is their
# household and "vous" the company, even when a relative speaks of the member ("Il a un nouveau
# numéro"). An impersonal "il" (French grammar: "il y a", "il faut", "il reste", "il s'agit", "il
# semble", "il paraît") names nobody.
_FIRST_SINGULAR = re.compile(r"\b(?:je|j'|j’|me|m'|m’|moi|mon|ma|mes|i|i'm|i've|my)\b", re.IGNORECASE)
_THIRD_MEMBER = re.compile(
    r"\b(?:il|elle|lui|son|sa|ses|l'adhérente?|l'adherente?|le client|la cliente|le membre|l'assurée?|"
    r"le sociétaire|la sociétaire|he|she|his|her|the (?:member|customer|client))\b|"
    r"\b(?:m\.|mme\b|madame\b|monsieur\b)|^<PERSON_\d+>",
    re.IGNORECASE,
)


_IMPERSONAL = re.compile(
    r"\bil (?:ne |n')?(?:y (?:a|avait|aura|aurait)|faut|faudra|faudrait|fallait|reste|restait|restera|"
    r"s'agit|semble|semblait|paraît|parait)\b",
    re.IGNORECASE,
)


def _relayed(statement: str) -> bool:
    return not _FIRST_SINGULAR.search(statement) and _THIRD_MEMBER.search(_IMPERSONAL.sub(" ", statement)) is not None


def _with_question(text: str, question: str, *, english: bool) -> str:
    """A short answer keeps the question it answers, quoted: never turned into a statement, since
    the answer may contradict it ("Souhaitez-vous toujours le 5 ?" — "Non, le 10.")."""
    body = text.rstrip(".")
    return f'{body} (answering "{question}").' if english else f"{body} (en réponse à « {question} »)."


def _last_question(sentences: Sequence[str]) -> str | None:
    """A message's closing question (the advisor's, or the member's: "On paie combien, déjà ?"), unless
    it is ritual ("que puis-je faire pour vous ?"). An
    elliptic one ("De combien ?", "Depuis quand ?") is asked about the sentence before it ("Un
    virement permanent vers la Pologne. De combien ?"): both are the question the answer is read with."""
    if not sentences:
        return None
    last = strip_fillers(sentences[-1])
    if not (is_question(last) and without_ritual(last)):
        return None
    if len(sentences) > 1 and len(content_tokens(last)) <= _ELLIPTIC:
        before = strip_fillers(without_ritual(sentences[-2]))
        if before and not is_question(before) and carries_information(before, advisor=True):
            return f"{before[:1].upper()}{before[1:]} {last}"
    return last


def _episode(call: _Call, messages: Sequence[Message], session_id: str | None) -> str | None:
    """Only a call where something was decided gets one. A summary of topics alone ("Appel du 3 mai :
    situation familiale et coordonnées") restates what its facts say with fewer words, and it crowds
    them out of a top-k: on fr-dev-2's calls such episodes were one in seven of the top-3 results
    of the missed queries."""
    if session_id is None:
        return None
    if not call.decisions:
        return None
    at = next((m.at for m in messages if m.at is not None), None)
    named = episode.topics(call.member_said, english=call.english)
    return episode.summary(at=at, topics=named, decisions=call.decisions, english=call.english)
