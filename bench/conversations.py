"""A deterministic, generated long-conversation dataset for ``bench/retrieval.py``.

Twelve conversations between two friends (eight in English, four in Chinese), ten dated sessions
of thirty turns each: 3,600 turns. Every turn starts with its speaker's name, as in public
long-conversation benchmarks. A conversation holds three kinds of turns:

- **facts** (a dozen in English, eight in Chinese): one speaker states something that happened
  (an adoption, a trip, a purchase, a race...), 60% of them with a relative date ("yesterday",
  "last Saturday", "上周");
- **hard negatives**, twenty per fact, on the fact's own topic and with its vocabulary, that do
  not answer its questions. Ten sentences per topic, two of each kind: the speaker's wish or plan
  before it happened ("a corgi would be so cute"), a third party's story with a competing value
  ("my cousin adopted a beagle"), the speaker's follow-up that leaves the value out ("Biscuit
  chewed another shoe"), the friend's question naming the speaker ("Caroline, how is the new
  dog?") and a general remark on the topic; each is said twice, in different sessions. A real long
  conversation comes back to the same topics with the same words and names; without them, the only
  turns about a topic are the facts, and any retriever finds them;
- **small talk** from a shared pool of everyday sentences, some addressing the friend by name and
  some with relative dates ("yesterday was such a long day"), so that a day and a name are not
  unique to the facts either.

A turn is one to three sentences: its own (fact, negative or small talk) with a small-talk
sentence before it and after it, each with probability ``SMALL_TALK_SHARE``; people rarely say
one thing per turn, and a fact said in passing is what a whole-turn vector finds hardest.

Questions are written from the facts and labelled with the turn that holds the evidence:

- single-hop: one fact, asked with the words a person would use (word forms differ: hiking/hiked);
- multi-hop: two facts of the same speaker from different sessions, asked together;
- temporal: what a speaker did on a calendar day, the fact having said "yesterday" or "last week";
- paraphrase: one fact asked in other words (unwind / relax, 放松 / 解压);
- adversarial: a fact asked about the other speaker; the evidence is the turn that holds the fact.

``split`` puts every other conversation of each language in the tuning half and the rest in the
held-out half: ranking constants are chosen on the first and reported on the second.

Nothing comes from a public data set: names, places and sentences are generated from the tables
in ``bench/conversation_topics.py`` with ``random.Random(seed)``; the same seed gives the same
dataset on every machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bench.conversation_topics import (
    EN_DAYS,
    EN_FILLER,
    EN_TOPICS,
    ZH_DAYS,
    ZH_FILLER,
    ZH_TOPICS,
    Topic,
)

SESSIONS = 10
TURNS_PER_SESSION = 30
EN_NAMES = [
    ("Caroline", "Melanie"),
    ("Jon", "Gina"),
    ("Audrey", "Andrew"),
    ("Maria", "Tom"),
    ("Evan", "Sam"),
    ("Nora", "Felix"),
    ("Priya", "Daniel"),
    ("Grace", "Oliver"),
]
ZH_NAMES = [("李娜", "王伟"), ("张敏", "刘洋"), ("陈静", "赵磊"), ("孙悦", "周强")]
MONTHS = (
    "January February March April May June July August September October November December".split()
)
RELATIVE_OFFSETS = {
    "yesterday": 1,
    "last Saturday": None,
    "two days ago": 2,
    "last week": 7,
    "today": 0,
    "昨天": 1,
    "前天": 2,
    "上周": 7,
    "今天": 0,
    "三天前": 3,
}
SPLITS = ("tune", "held-out")
# A topic comes back: each hard negative is said twice, in other sessions and company.
NEGATIVE_REPEATS = 2
# The chance of a small-talk sentence before a turn's own, and again after it.
SMALL_TALK_SHARE = 0.35


@dataclass(frozen=True, slots=True)
class Turn:
    index: int  # position in the conversation, 0-based
    session: int
    speaker: str
    text: str
    at: datetime
    kind: str = "filler"  # filler | fact | negative


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    category: str
    text: str
    evidence: tuple[int, ...]  # turn indexes
    answer: tuple[str, ...] = ()  # gold answer: the value(s) asked for (``bench/context.py``)


@dataclass
class Conversation:
    id: str
    language: str
    speakers: tuple[str, str]
    split: str = "tune"
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Planted:
    position: int
    speaker: int  # 0 or 1
    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class Fact:
    number: int
    position: int
    speaker: int
    value: str
    relative: str | None


def said_day(said: datetime, expression: str) -> datetime:
    offset = RELATIVE_OFFSETS[expression]
    if offset is None:  # last Saturday: the Saturday before the day it was said
        offset = (said.weekday() - 5) % 7 or 7
    return said - timedelta(days=offset)


def date_text(day: datetime, language: str) -> str:
    return (
        f"{day.day} {MONTHS[day.month - 1]} {day.year}"
        if language == "en"
        else f"{day.year}年{day.month}月{day.day}日"
    )


def _take(free: list[int], rng: random.Random, low: int, high: int) -> int | None:
    """A random free position in [low, high), removed from ``free``; None when there is none."""
    choices = [p for p in free if low <= p < high]
    if not choices:
        return None
    pick = rng.choice(choices)
    free.remove(pick)
    return pick


def _plant(
    topics: list[Topic], names: tuple[str, str], language: str, rng: random.Random
) -> tuple[list[Fact], list[_Planted]]:
    """Facts in random turns (never the first or last two of a session), then each fact's hard
    negatives: wishes before it, follow-ups and the friend's questions after it, the rest anywhere."""
    total = SESSIONS * TURNS_PER_SESSION
    free = [p for p in range(total) if 2 <= p % TURNS_PER_SESSION < TURNS_PER_SESSION - 2]
    facts: list[Fact] = []
    planted: list[_Planted] = []
    for number, topic in enumerate(topics):
        position = _take(free, rng, 0, total)
        assert position is not None
        who = rng.randrange(2)
        value = rng.choice(topic.values)
        relative = (
            rng.choice(EN_DAYS if language == "en" else ZH_DAYS) if rng.random() < 0.6 else None
        )
        body = topic.statement.format(x=value)
        text = (
            (f"{relative} {body}" if language == "en" else f"{relative}{body}")
            if relative
            else body
        )
        facts.append(Fact(number, position, who, value, relative))
        planted.append(_Planted(position, who, text, "fact"))
    for fact in facts:
        others = [v for v in topics[fact.number].values if v != fact.value]
        for negative in [n for n in topics[fact.number].negatives for _ in range(NEGATIVE_REPEATS)]:
            low, high = {"before": (0, fact.position), "after": (fact.position + 1, total)}.get(
                negative.when, (0, total)
            )
            position = _take(free, rng, low, high)
            if position is None:
                continue  # a wish before a fact of the first turns: left out rather than out of order
            speaker = fact.speaker if negative.by == "self" else 1 - fact.speaker
            text = negative.text.format(
                y=rng.choice(others), s=names[fact.speaker], o=names[1 - speaker]
            )
            planted.append(_Planted(position, speaker, text, "negative"))
    return facts, planted


def build_conversation(index: int, language: str, rng: random.Random) -> Conversation:
    names = EN_NAMES[index] if language == "en" else ZH_NAMES[index]
    topics, filler = (EN_TOPICS, EN_FILLER) if language == "en" else (ZH_TOPICS, ZH_FILLER)
    conv = Conversation(f"{language}{index}", language, names, SPLITS[index % 2])
    start = datetime(2023, 3, 1, 9, 0, tzinfo=UTC) + timedelta(
        days=37 * index + (0 if language == "en" else 11)
    )
    facts, planted = _plant(topics, names, language, rng)
    conv.facts = facts
    by_position = {p.position: p for p in planted}
    position = 0
    for session in range(SESSIONS):
        day = start + timedelta(days=session * rng.randint(6, 11) + session)
        for turn in range(TURNS_PER_SESSION):
            speaker, kind = turn % 2, "filler"
            text = rng.choice(filler).format(o=names[1 - speaker])
            if position in by_position:
                speaker, text, kind = (
                    by_position[position].speaker,
                    by_position[position].text,
                    by_position[position].kind,
                )
            text = _with_small_talk(text, filler, names[1 - speaker], language, rng)
            at = day + timedelta(minutes=2 * turn)
            conv.turns.append(
                Turn(position, session, names[speaker], f"{names[speaker]}: {text}", at, kind)
            )
            position += 1
    _questions(conv, topics, facts, rng)
    return conv


def _with_small_talk(
    text: str, filler: list[str], listener: str, language: str, rng: random.Random
) -> str:
    """A turn of one to three sentences: people rarely say one thing at a time, so a fact shares its
    turn with small talk as often as not (and its vector carries both)."""
    before = [rng.choice(filler).format(o=listener)] if rng.random() < SMALL_TALK_SHARE else []
    after = [rng.choice(filler).format(o=listener)] if rng.random() < SMALL_TALK_SHARE else []
    end = "。" if language == "zh" else "."
    joiner = "" if language == "zh" else " "
    return joiner.join(s if s[-1] in "?!.？！。" else s + end for s in [*before, text, *after])


def _questions(
    conv: Conversation, topics: list[Topic], facts: list[Fact], rng: random.Random
) -> None:
    names = conv.speakers
    for fact in facts:
        topic, speaker = topics[fact.number], names[fact.speaker]
        qid = f"{conv.id}-f{fact.number}"
        evidence, value = (fact.position,), (fact.value,)
        conv.questions.append(
            Question(
                qid + "-single", "single-hop", topic.question.format(s=speaker), evidence, value
            )
        )
        conv.questions.append(
            Question(
                qid + "-para", "paraphrase", topic.paraphrase.format(s=speaker), evidence, value
            )
        )
        adversarial = topic.question.format(s=names[1 - fact.speaker])
        conv.questions.append(Question(qid + "-adv", "adversarial", adversarial, evidence, value))
        if fact.relative is not None:
            day = date_text(said_day(conv.turns[fact.position].at, fact.relative), conv.language)
            text = (
                f"What did {speaker} do on {day}?"
                if conv.language == "en"
                else f"{speaker}{day}做了什么？"
            )
            conv.questions.append(Question(qid + "-time", "temporal", text, evidence, value))
    for who in (0, 1):
        mine = [f for f in facts if f.speaker == who]
        rng.shuffle(mine)
        for a, b in zip(mine[::2], mine[1::2], strict=False):
            qa, qb = (topics[f.number].question.format(s=names[who]) for f in (a, b))
            joiner = " And " if conv.language == "en" else "另外，"
            qid, evidence = f"{conv.id}-m{a.number}-{b.number}", (a.position, b.position)
            text, values = qa + joiner + qb, (a.value, b.value)
            conv.questions.append(Question(qid, "multi-hop", text, tuple(sorted(evidence)), values))


def build_dataset(seed: int = 20231) -> list[Conversation]:
    rng = random.Random(seed)
    return [build_conversation(i, "en", rng) for i in range(len(EN_NAMES))] + [
        build_conversation(i, "zh", rng) for i in range(len(ZH_NAMES))
    ]
