"""The questions ``bench/context.py`` asks, with their gold answers.

From ``bench/conversations.py``: the single-hop, paraphrase and adversarial questions (gold: the
fact's value) and the multi-hop ones (gold: both facts' values). Its temporal questions ask what
happened on a day, which the turns answer only with a relative date; here a temporal question asks
the other way round, when a fact said with a relative date happened ("When did Caroline adopt the
puppy?", "李娜什么时候领养了小狗？"), and its gold answer is the calendar day in its written form
("7 May 2023", "2023年5月7日") while the turn itself says "yesterday" or "上周". The retrieval
evaluation's questions are untouched: these are built beside them.
"""

from __future__ import annotations

from bench.conversation_topics import EN_TOPICS, ZH_TOPICS
from bench.conversations import Conversation, Question, date_text, said_day

KEPT = ("single-hop", "multi-hop", "paraphrase", "adversarial")


def when_questions(conv: Conversation) -> list[Question]:
    """One question per fact said with a relative date: on which day it happened."""
    topics = EN_TOPICS if conv.language == "en" else ZH_TOPICS
    out: list[Question] = []
    for fact in conv.facts:
        if fact.relative is None:
            continue
        day = said_day(conv.turns[fact.position].at, fact.relative)
        text = topics[fact.number].when.format(s=conv.speakers[fact.speaker])
        out.append(
            Question(
                f"{conv.id}-f{fact.number}-when",
                "temporal",
                text,
                (fact.position,),
                (date_text(day, conv.language),),
            )
        )
    return out


def context_questions(conv: Conversation) -> list[Question]:
    """The conversation's questions with gold answers, temporal ones asking when."""
    kept = [q for q in conv.questions if q.category in KEPT]
    return kept + when_questions(conv)
