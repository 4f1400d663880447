"""The extractive builder's Key Facts: fact-bearing statements, dated, their relative dates
resolved; small talk left out; a statement kept as a fact not repeated as a goal."""

from __future__ import annotations

from app.working_memory.document import parse_wm_sections, section_key
from app.working_memory.extractive import update_working_memory_extractive
from app.working_memory.fact_weight import MIN_FACT_WEIGHT, fact_weight

MAY_8 = 1_683_540_000_000


def _said(role: str, text: str) -> dict[str, object]:
    return {"role": role, "content": text, "timestamp": MAY_8}


def test_facts_weigh_more_than_small_talk() -> None:
    facts = [
        "Caroline: yesterday we adopted a beagle puppy, the kids named him Biscuit",
        "we decided to pin v1.4.2 in deploy/prod.yaml",
        "I finally hiked up to Eagle Ridge with my brother",
        "李娜：昨天我们去了上海的外滩",
    ]
    chatter = [
        "Melanie: wow that is lovely",
        "Honestly the weather has been so nice lately",
        "好的",
    ]
    assert all(fact_weight(f) >= MIN_FACT_WEIGHT for f in facts)
    assert all(fact_weight(c) < MIN_FACT_WEIGHT for c in chatter)


def test_key_facts_are_dated_and_resolved_and_not_repeated_as_goals() -> None:
    messages = [
        _said("user", "Caroline: yesterday we adopted a beagle puppy, the kids named him Biscuit"),
        _said("assistant", "Melanie: wow that is lovely"),
        _said("user", "Caroline: can you remind me to buy dog food"),
    ]
    sections = parse_wm_sections(update_working_memory_extractive(None, messages))
    facts = sections[section_key("Key Facts & Decisions")]
    assert "- [8 May 2023] Caroline: yesterday (7 May 2023) we adopted a beagle puppy" in facts
    assert "lovely" not in facts
    goals = sections[section_key("Task & Goals")]
    assert "beagle" not in goals and "dog food" in goals
