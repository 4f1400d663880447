"""How much a sentence states a fact, for the extractive Working Memory's Key Facts, and a fact
as it is kept: dated, its relative dates resolved. Pure."""

from __future__ import annotations

import re
from datetime import date

from app.search.text.date_terms import day_written_beside, with_resolved_dates
from app.search.text.query import speaker_label
from app.working_memory.guards import ANCHOR_VALUE_PATTERNS

# The guard's value anchors (dates, numbers with units, money, decisions) in one pass over
# lower-cased text; their patterns hold no upper-case escapes, so lowering them is safe.
_ANY_ANCHOR_RE = re.compile("|".join(p.pattern for p in ANCHOR_VALUE_PATTERNS).lower())
# fact_weight's signs, for English and Chinese alike.
MIN_FACT_WEIGHT = 2.5
_NAME_RE = re.compile(r"(?<![.!?]\s)\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_NOT_NAMES = frozenset(
    "i i'm i've i'll i'd the a an and but so oh ok okay yes no it its that this we my our you "
    "your he she they his her their what when where who why how hi hey hello thanks".split()
    + "monday tuesday wednesday thursday friday saturday sunday".split()
)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)?")
_FIRST_PERSON_RE = re.compile(r"\b(?:i|we|my|our|i'm|we're|i've|we've)\b")
_DONE_RE = re.compile(
    r"\b\w{3,}ed\b|\b(?:bought|got|went|took|made|won|ran|met|began|built|found|gave|left|sold|wrote)\b"
)
_LIKED_RE = re.compile(
    r"\b(?:love|loves|like|likes|prefer|prefers|favou?rite|enjoy|enjoys|hate|hates)\b"
)
_ZH_FACT_RE = re.compile(r"(?:我|我们|他|她).{0,12}(?:了|过|喜欢|最爱|决定)")
_RELATIVE_DAY_RE = re.compile(
    r"\b(?:yesterday|today|tonight|last (?:week|month|year|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|\w+ (?:days|weeks) ago)\b"
    r"|昨天|前天|上周|上个月|去年|今天|天前"
)


def dated(sentence: str, said_on: date | None) -> str:
    if said_on is None:
        return sentence
    resolved = with_resolved_dates(sentence, said_on)
    return f"[{day_written_beside(said_on.isoformat(), sentence)}] {resolved}"


def fact_weight(sentence: str) -> float:
    """How much a sentence states a fact: the guard's value anchors (dates, amounts, decisions)
    count most, then names, numbers, a first-person account of something done or liked, and a
    resolvable relative date. Small talk weighs little whatever its length."""
    text = sentence.strip()
    body = text[len(speaker_label(text)) :]
    lowered = body.lower()
    weight = 2.0 * len(set(_ANY_ANCHOR_RE.findall(lowered)))
    names = {n for n in _NAME_RE.findall(body[1:]) if n.lower() not in _NOT_NAMES}
    weight += min(len(names), 3)
    weight += min(len(_NUMBER_RE.findall(body)), 2)
    if _FIRST_PERSON_RE.search(lowered) and (_DONE_RE.search(lowered) or _LIKED_RE.search(lowered)):
        weight += 1.5
    if _ZH_FACT_RE.search(body):
        weight += 1.5
    if _RELATIVE_DAY_RE.search(lowered):
        weight += 1.0
    return weight
