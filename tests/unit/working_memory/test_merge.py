"""Section merge through the guards (docs/peers.md, OpenViking §3.3, §4.1–§4.3 behaviours)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    extract_bullet_items,
    parse_wm_sections,
    render_wm,
)
from app.working_memory.guards import WM_CONSOLIDATION_SENTINEL, extract_lexical_anchors
from app.working_memory.section_merge import merge_wm_sections

KEEP = {"op": "KEEP"}


def make_wm(**bodies: str) -> str:
    """Canonical WM from keyword bodies, e.g. ``key_facts_and_decisions="- a"``."""
    names = {
        name.lower().replace(" & ", "_and_").replace(" ", "_"): name for name in WM_SEVEN_SECTIONS
    }
    return render_wm({names[key]: body for key, body in bodies.items()})


def keep_all() -> dict[str, dict[str, str]]:
    return {name: dict(KEEP) for name in WM_SEVEN_SECTIONS}


def section_items(wm: str, name: str) -> list[str]:
    return extract_bullet_items(parse_wm_sections(wm).get(f"## {name}", ""))


def headers(wm: str) -> list[str]:
    return [line for line in wm.splitlines() if line.startswith("## ")]


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


BASE = make_wm(
    session_title="Old Title",
    current_state="Idle",
    task_and_goals="- ship v1",
    key_facts_and_decisions="- fact A\n- fact B",
    files_and_context="- src/main.py",
    errors_and_corrections="- wrong port",
    open_issues="- bug in auth module",
)


# --- basic merge (§3.3) ---


def test_all_keep_preserves_document() -> None:
    assert merge_wm_sections(BASE, keep_all()) == BASE


def test_empty_and_none_ops_reproduce_old() -> None:
    assert merge_wm_sections(BASE, {}) == BASE
    assert merge_wm_sections(BASE, None) == BASE
    assert parse_wm_sections(merge_wm_sections(BASE, {}))["## Session Title"] == "Old Title"


def test_non_dict_ops_and_values_keep_old() -> None:
    assert merge_wm_sections(BASE, ["not", "a", "dict"]) == BASE  # type: ignore[arg-type]
    ops: dict[str, Any] = {"Current State": "UPDATE", "Task & Goals": 7, "Open Issues": None}
    assert merge_wm_sections(BASE, ops) == BASE


def test_current_state_update_replaces() -> None:
    ops = {"Current State": {"op": "UPDATE", "content": "  Busy refactoring  \n"}}
    assert parse_wm_sections(merge_wm_sections(BASE, ops))["## Current State"] == "Busy refactoring"


def test_ops_are_case_insensitive() -> None:
    ops = {"Current State": {"op": "update", "content": "Busy"}, "Task & Goals": {"op": "keep"}}
    merged = parse_wm_sections(merge_wm_sections(BASE, ops))
    assert merged["## Current State"] == "Busy"
    assert merged["## Task & Goals"] == "- ship v1"


def test_open_issues_append_keeps_both() -> None:
    merged = merge_wm_sections(BASE, {"Open Issues": {"op": "APPEND", "items": ["memory leak"]}})
    assert section_items(merged, "Open Issues") == ["bug in auth module", "memory leak"]


def test_key_facts_update_without_anchors_is_accepted() -> None:
    ops = {"Key Facts & Decisions": {"op": "UPDATE", "content": "- fact A\n- fact C"}}
    merged = merge_wm_sections(BASE, ops)
    assert section_items(merged, "Key Facts & Decisions") == ["fact A", "fact C"]
    assert "fact B" not in merged


def test_title_drift_blocked() -> None:
    ops = {"Session Title": {"op": "UPDATE", "content": "Completely Unrelated Topic"}}
    assert parse_wm_sections(merge_wm_sections(BASE, ops))["## Session Title"] == "Old Title"


def test_all_update_with_related_title_accepted() -> None:
    ops = {
        "Session Title": {"op": "UPDATE", "content": "Old Title (updated)"},
        "Current State": {"op": "UPDATE", "content": "New state"},
        "Task & Goals": {"op": "UPDATE", "content": "- new goal"},
    }
    merged = parse_wm_sections(merge_wm_sections(BASE, ops))
    assert merged["## Session Title"] == "Old Title (updated)"
    assert merged["## Current State"] == "New state"
    assert merged["## Task & Goals"] == "- new goal"


@pytest.mark.parametrize("old", [None, "", "legacy summary text", BASE])
def test_all_seven_headers_always_present(old: str | None) -> None:
    merged = merge_wm_sections(old, {"Current State": {"op": "UPDATE", "content": "x"}})
    assert headers(merged) == [f"## {name}" for name in WM_SEVEN_SECTIONS]
    assert merged.startswith("# Working Memory\n\n") and merged.endswith("\n")


def test_missing_and_unknown_ops_keep(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        merged = merge_wm_sections(BASE, {"Task & Goals": {"op": "UNKNOWN_OP"}})
    assert merged == BASE
    assert any("UNKNOWN_OP" in record.getMessage() for record in caplog.records)


def test_update_with_non_string_content_keeps_old() -> None:
    assert merge_wm_sections(BASE, {"Current State": {"op": "UPDATE", "content": ["x"]}}) == BASE


def test_append_drops_non_strings(caplog: pytest.LogCaptureFixture) -> None:
    ops = {"Open Issues": {"op": "APPEND", "items": ["valid item", 42, None, {"bad": True}]}}
    with caplog.at_level(logging.WARNING):
        merged = merge_wm_sections(BASE, ops)
    assert section_items(merged, "Open Issues") == ["bug in auth module", "valid item"]
    assert "42" not in merged
    assert caplog.records


def test_append_empty_or_blank_items_keep_old() -> None:
    for items in ([], ["  ", ""], None, "not a list"):
        assert merge_wm_sections(BASE, {"Open Issues": {"op": "APPEND", "items": items}}) == BASE


def test_append_on_empty_section_has_no_leading_newline() -> None:
    merged = merge_wm_sections(make_wm(), {"Open Issues": {"op": "APPEND", "items": [" a ", "b"]}})
    assert parse_wm_sections(merged)["## Open Issues"] == "- a\n- b"


def test_guards_skip_empty_old_section() -> None:
    empty = make_wm()
    ops = {
        "Session Title": {"op": "UPDATE", "content": "Anything"},
        "Errors & Corrections": {"op": "UPDATE", "content": "first error, not a bullet"},
        "Key Facts & Decisions": {"op": "UPDATE", "content": "- f"},
    }
    merged = parse_wm_sections(merge_wm_sections(empty, ops))
    assert merged["## Session Title"] == "Anything"
    # The append-only guard would have demoted this to "- first error, not a bullet".
    assert merged["## Errors & Corrections"] == "first error, not a bullet"
    assert merged["## Key Facts & Decisions"] == "- f"


def test_errors_update_demoted_to_append() -> None:
    ops = {"Errors & Corrections": {"op": "UPDATE", "content": "- new error only"}}
    assert section_items(merge_wm_sections(BASE, ops), "Errors & Corrections") == [
        "wrong port",
        "new error only",
    ]


def test_files_update_dropping_path_is_kept() -> None:
    ops = {"Files & Context": {"op": "UPDATE", "content": "- nothing here"}}
    assert merge_wm_sections(BASE, ops) == BASE


def test_files_url_line_drop_kept() -> None:
    old = make_wm(
        files_and_context="- docs/guide.md manual\n- https://example.com/images/unused.png banner"
    )
    ops = {"Files & Context": {"op": "UPDATE", "content": "- docs/guide.md manual"}}
    merged = merge_wm_sections(old, ops)
    assert merged == old
    assert "unused.png" in merged and "docs/guide.md" in merged


def test_open_issues_drop_restored_then_not_again() -> None:
    ops = {"Open Issues": {"op": "UPDATE", "content": "- new issue"}}
    once = merge_wm_sections(BASE, ops)
    assert section_items(once, "Open Issues") == [
        "new issue",
        "[silently dropped, restored] bug in auth module",
    ]
    twice = merge_wm_sections(once, {"Open Issues": {"op": "UPDATE", "content": "- other"}})
    assert section_items(twice, "Open Issues") == [
        "other",
        "[silently dropped, restored] new issue",
    ]


def test_nested_restore_markers_not_restored() -> None:
    old = make_wm(
        open_issues="- [silently dropped, restored] [silently dropped, restored] old issue"
    )
    merged = merge_wm_sections(old, {"Open Issues": {"op": "UPDATE", "content": "- fresh"}})
    assert section_items(merged, "Open Issues") == ["fresh"]


def test_sentinel_already_present_blocks_append() -> None:
    facts = [f"Fact {i}" for i in range(55)] + [WM_CONSOLIDATION_SENTINEL]
    old = make_wm(key_facts_and_decisions=bullets(facts))
    ops = {"Key Facts & Decisions": {"op": "APPEND", "items": ["Another fact"]}}
    assert merge_wm_sections(old, ops) == old


# --- growth (test_working_memory_growth.py, §4.2) ---


def grow(section: str, rounds: int) -> list[str]:
    wm = make_wm(**{section: "- seed item zero"})
    name = parse_name(section)
    for i in range(rounds):
        wm = merge_wm_sections(wm, {name: {"op": "APPEND", "items": [f"round {i:03d} detail"]}})
    return section_items(wm, name)


def parse_name(key: str) -> str:
    return {n.lower().replace(" & ", "_and_").replace(" ", "_"): n for n in WM_SEVEN_SECTIONS}[key]


def test_monotonic_growth_key_facts_to_51() -> None:
    assert len(grow("key_facts_and_decisions", 50)) == 51


def test_monotonic_growth_errors_to_41() -> None:
    assert len(grow("errors_and_corrections", 40)) == 41


def test_monotonic_growth_files_to_31() -> None:
    assert len(grow("files_and_context", 30)) == 31


def test_sixty_round_aggregate() -> None:
    wm = make_wm(
        key_facts_and_decisions="- Fact seed recorded",
        files_and_context="- src/seed.py",
        errors_and_corrections="- seed error",
    )
    for i in range(60):
        ops = {
            "Current State": {"op": "UPDATE", "content": f"Round {i}"},
            "Key Facts & Decisions": {"op": "APPEND", "items": [f"Fact number {i:03d} recorded"]},
            "Files & Context": {"op": "APPEND", "items": [f"src/mod_{i:03d}.py"]},
            "Errors & Corrections": {"op": "APPEND", "items": [f"error number {i:03d}"]},
        }
        wm = merge_wm_sections(wm, ops)
    facts = section_items(wm, "Key Facts & Decisions")
    assert len(facts) == 52
    assert "CONSOLIDATION REQUIRED" in facts[-1]
    assert facts.count(WM_CONSOLIDATION_SENTINEL) == 1
    assert len(section_items(wm, "Files & Context")) == 61
    assert len(section_items(wm, "Errors & Corrections")) == 61


def facts_wm(items: list[str]) -> str:
    return make_wm(key_facts_and_decisions=bullets(items))


def merge_facts(old: str, op: dict[str, Any]) -> list[str]:
    return section_items(
        merge_wm_sections(old, {"Key Facts & Decisions": op}), "Key Facts & Decisions"
    )


def numbered(n: int) -> list[str]:
    return [f"Fact {i}" for i in range(n)]


def test_anti_bloat_small_append_accepted() -> None:
    assert (
        len(merge_facts(facts_wm(numbered(10)), {"op": "APPEND", "items": ["new a", "new b"]}))
        == 12
    )


def test_anti_bloat_oversized_append_capped_at_five() -> None:
    items = [f"Insight {c}" for c in "ABCDEFGHIJ"]
    assert len(merge_facts(facts_wm(numbered(30)), {"op": "APPEND", "items": items})) == 35


def test_anti_bloat_oversized_append_dedupes() -> None:
    op = {"op": "APPEND", "items": ["Fact 0", "Fact 1", "Brand new insight"]}
    result = merge_facts(facts_wm(numbered(30)), op)
    assert len(result) == 31 and result[-1] == "Brand new insight"


def test_anti_bloat_emergency_sentinel_then_stop() -> None:
    old = facts_wm(numbered(55))
    first = merge_wm_sections(
        old, {"Key Facts & Decisions": {"op": "APPEND", "items": ["Emergency fact A"]}}
    )
    items = section_items(first, "Key Facts & Decisions")
    assert len(items) == 56 and items[-1] == WM_CONSOLIDATION_SENTINEL
    assert "Emergency fact A" not in first
    again = merge_facts(first, {"op": "APPEND", "items": ["Emergency fact B"]})
    assert len(again) == 56


def test_anti_bloat_emergency_rejected_update_no_salvage() -> None:
    assert (
        len(merge_facts(facts_wm(numbered(55)), {"op": "UPDATE", "content": "- Only one bullet."}))
        == 55
    )


def test_anti_bloat_oversized_non_strings_stringified() -> None:
    op = {"op": "APPEND", "items": [123, None, "Valid new fact", True]}
    result = merge_facts(facts_wm(numbered(30)), op)
    assert result[30:] == ["123", "Valid new fact", "True"]


# --- Layer 1 / Layer 2 (§4.2, §4.3) ---

DECISIONS = [
    f"Decision {i}: keep module_{i}.py because API contract {i} is stable." for i in range(1, 42)
]


def test_layer1_reject_salvages_summary() -> None:
    old = facts_wm(DECISIONS)
    summary = "Consolidated summary: keep modules 1-41 because their API contracts are stable."
    result = merge_facts(old, {"op": "UPDATE", "content": f"- {summary}"})
    assert len(result) == 42
    assert result[:41] == DECISIONS and result[41] == summary


def test_layer1_reject_long_module_list_summary_kept_with_old() -> None:
    listing = ", ".join(f"module_{i}.py" for i in range(1, 42))
    result = merge_facts(facts_wm(DECISIONS), {"op": "UPDATE", "content": f"- Keep {listing}"})
    assert result[0].startswith("Decision 1:") and result[-1] == f"Keep {listing}"


def test_layer1_reject_new_decision_appended() -> None:
    new = "New decision: only module_1.py remains relevant."
    result = merge_facts(facts_wm(DECISIONS), {"op": "UPDATE", "content": f"- {new}"})
    assert any(item.startswith("Decision 41") for item in result)
    assert result[-1] == new


def test_salvage_keeps_new_fact_from_rejected_update() -> None:
    content = (
        "- Summary: all modules stable.\n- NEW: Caroline adopted a puppy named Max on 2024-06-15."
    )
    result = merge_facts(facts_wm(DECISIONS), {"op": "UPDATE", "content": content})
    assert len(result) >= 42
    assert any("Caroline adopted a puppy named Max" in item for item in result)


FAMILY = [
    "Caroline adopted a rescue dog named Biscuit on 2024-01-20",
    "Caroline's partner is Marcus; they married on 15 March 2024",
    "Melanie is Caroline's sister and lives in Portland",
    "Jake is Melanie's son, he is 7 years old",
    "Marcus works as a nurse at Portland General, night shifts start at 6 PM",
    "Caroline and Marcus plan a trip to Yellowstone in August",
    "The Yellowstone trip budget is $3,500",
    "Caroline booked a cabin with 3 bedrooms for Yellowstone",
    "Melanie and Jake will join the Yellowstone trip",
    "Caroline visited Sweden in 2019 for 2 weeks",
    "Caroline wants to return to Sweden in December 2025",
    "Marcus chose Stockholm as the first stop because his cousin lives there",
    "Biscuit needs a sitter during trips; Melanie agreed to help",
] + [f"Caroline walked Biscuit in the park again (walk {i})" for i in range(28)]

CONSOLIDATED_11 = [
    "Caroline adopted rescue dog Biscuit on 2024-01-20; walks him in the park daily",
    "Caroline married Marcus on 15 March 2024",
    "Melanie (Caroline's sister) lives in Portland with son Jake, 7 years old",
    "Marcus: nurse at Portland General, night shifts from 6 PM",
    "Yellowstone trip in August: budget $3,500, cabin with 3 bedrooms",
    "Melanie and Jake join the Yellowstone trip",
    "Caroline visited Sweden in 2019 for 2 weeks",
    "Caroline plans to return to Sweden in December 2025",
    "Marcus chose Stockholm first because his cousin lives there",
    "Melanie agreed to sit Biscuit during trips",
    "Caroline's Biscuit walks are a daily routine",
]


def test_family_fixture_shape() -> None:
    assert len(FAMILY) == 41 and len(CONSOLIDATED_11) == 11
    old = extract_lexical_anchors(bullets(FAMILY))
    kept = old & extract_lexical_anchors(bullets(CONSOLIDATED_11))
    assert len(kept) / len(old) >= 0.70


def test_layer2_accept_eleven_bullet_consolidation() -> None:
    result = merge_facts(facts_wm(FAMILY), {"op": "UPDATE", "content": bullets(CONSOLIDATED_11)})
    assert len(result) <= 15
    text = "\n".join(result)
    for name in (
        "Caroline",
        "Melanie",
        "Marcus",
        "Biscuit",
        "Jake",
        "Yellowstone",
        "Sweden",
        "Portland",
    ):
        assert name in text


def test_layer2_accept_ten_bullet_consolidation() -> None:
    ten = CONSOLIDATED_11[:10]
    assert 0.15 <= len(ten) / len(FAMILY) < 0.25
    result = merge_facts(facts_wm(FAMILY), {"op": "UPDATE", "content": bullets(ten)})
    assert len(result) == 10
    text = "\n".join(result)
    for anchor in ("15 March 2024", "2024-01-20", "December 2025"):
        assert anchor in text


def test_layer2_reject_vague_consolidation() -> None:
    vague = [
        "The user has various personal plans.",
        "There are some family members.",
        "A pet was adopted at some point.",
        "Travel is being considered.",
        "Some money was budgeted.",
        "There was a wedding.",
        "Someone works nights.",
        "A relative will help with the pet.",
    ]
    result = merge_facts(facts_wm(FAMILY), {"op": "UPDATE", "content": bullets(vague)})
    assert len(result) >= 41
    assert "Caroline adopted a rescue dog named Biscuit on 2024-01-20" in result
