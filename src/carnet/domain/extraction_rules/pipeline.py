"""The rule-based extraction, message by message: sentences → filter → rewrite → classify → date.

For each message of the member ("user") or the call-center side ("assistant", "advisor"; "system"
messages are instructions, never facts):

1. split it into sentences and drop opening fillers (``sentences``);
2. a member's first sentence right after an advisor's question is read with it (``answers``);
3. questions are no facts (the member's still name the call's topic); ritual clauses go, and what
   is left must carry information (``smalltalk``);
4. the statement is rewritten in the third person (``rewrite_fr``/``rewrite_en``), given a
   category and importance (``classify``) and a ``valid_from`` (``dates``);
5. the same fact said twice in a call is kept once.

For a session, the episode summary (``episode``) is built from the member's topics and the
advisor's decisions. Everything is pure Python regular expressions: tens of microseconds per
sentence, no model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from carnet.domain.extraction import ExtractedFact, Extraction
from carnet.domain.extraction_rules import answers, episode
from carnet.domain.extraction_rules.classify import category, importance
from carnet.domain.extraction_rules.dates import valid_from
from carnet.domain.extraction_rules.rewrite_en import rewrite_en
from carnet.domain.extraction_rules.rewrite_fr import ADVISOR, MEMBER, rewrite_fr
from carnet.domain.extraction_rules.sentences import is_question, split_sentences, strip_fillers
from carnet.domain.extraction_rules.smalltalk import carries_information, without_ritual
from carnet.domain.intake import Message
from carnet.domain.text import exact_key

_ROLES = {"user": MEMBER, "member": MEMBER, "customer": MEMBER, "assistant": ADVISOR, "advisor": ADVISOR,
          "agent": ADVISOR}
_LONG = 300  # a sentence longer than this is cut at its semicolons (dictated notes run on)


@dataclass(slots=True)
class _Call:
    english: bool
    facts: list[ExtractedFact] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    member_said: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    advisor_spoke: bool = False

    def add(self, statement: str, speaker: str, at: datetime | None) -> None:
        text = rewrite_en(statement, speaker) if self.english else rewrite_fr(statement, speaker)
        key = exact_key(text)
        if key in self.seen:
            return
        self.seen.add(key)
        cat = category(text, advisor=speaker == ADVISOR)
        self.facts.append(ExtractedFact(text=text, category=cat, importance=importance(cat),
                                        valid_from=valid_from(statement, at)))
        if cat == "decision" and speaker == ADVISOR:
            self.decisions.append(text)


def extract(messages: Sequence[Message], *, session_id: str | None, locale: str) -> Extraction:
    call = _Call(english=locale.lower().startswith("en"))
    question: str | None = None  # the advisor's last question, waiting for the member's answer
    for message in messages:
        speaker = _ROLES.get(message.role.strip().lower())
        if speaker is None:
            question = None
            continue
        call.advisor_spoke |= speaker == ADVISOR
        sentences = _sentences(message.content)
        for n, sentence in enumerate(sentences):
            if speaker == MEMBER and n == 0 and question is not None:
                statement, sentence = answers.answered(question, sentence)
                if statement is not None:
                    _keep(call, statement, ADVISOR, message.at)
            _read(call, sentence, speaker, message.at)
        question = _last_question(sentences) if speaker == ADVISOR else None
    return Extraction(facts=tuple(call.facts), episode=_episode(call, messages, session_id))


def _sentences(content: str) -> list[str]:
    out: list[str] = []
    for sentence in split_sentences(content):
        if len(sentence) > _LONG:
            out.extend(p.strip() for p in sentence.split(";") if p.strip())
        else:
            out.append(sentence)
    return out


def _read(call: _Call, sentence: str, speaker: str, at: datetime | None) -> None:
    clean = strip_fillers(sentence)
    if not clean:
        return
    if is_question(clean):
        if speaker == MEMBER:
            call.member_said.append(clean)
        return
    _keep(call, clean, speaker, at)


def _keep(call: _Call, statement: str, speaker: str, at: datetime | None) -> None:
    clean = strip_fillers(without_ritual(statement))
    if not clean or not carries_information(clean, advisor=speaker == ADVISOR):
        return
    if speaker == MEMBER:
        call.member_said.append(clean)
    call.add(clean, speaker, at)


def _last_question(sentences: Sequence[str]) -> str | None:
    if not sentences:
        return None
    last = strip_fillers(sentences[-1])
    return last if is_question(last) else None


def _episode(call: _Call, messages: Sequence[Message], session_id: str | None) -> str | None:
    """Only a conversation gets one: decisions were made, or both sides spoke and the member said
    more than one thing. Member notes alone are already their own record; a summary that restates
    one of them with a date adds nothing but a record that crowds facts out of a top-k."""
    if session_id is None:
        return None
    if not call.decisions and not (call.advisor_spoke and len(call.facts) >= 2):
        return None
    at = next((m.at for m in messages if m.at is not None), None)
    named = episode.topics(call.member_said, english=call.english)
    return episode.summary(at=at, topics=named, decisions=call.decisions, english=call.english)
