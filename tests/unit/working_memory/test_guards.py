"""The five guards (docs/peers.md, OpenViking §3.4–§3.8) and the lexical anchors."""

from __future__ import annotations

import pytest

from app.working_memory.guards import (
    WM_ANCHOR_STOPWORDS,
    WM_CONSOLIDATION_SENTINEL,
    WM_PATH_LIKE_RE,
    WM_TITLE_STOPWORDS,
    enforce_append_only,
    enforce_files_no_regression,
    enforce_key_facts_consolidation,
    enforce_open_issues_resolved,
    enforce_title_stability,
    extract_lexical_anchors,
)

KEEP = {"op": "KEEP"}


def update(content: str) -> dict[str, str]:
    return {"op": "UPDATE", "content": content}


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


# --- Guard 1: title stability (§3.4) ---


def test_title_overlap_accepted() -> None:
    op = update("Debug Session Refinement")
    assert enforce_title_stability(op, "Debug Session Setup") == op


def test_title_zero_overlap_kept() -> None:
    assert (
        enforce_title_stability(update("Completely Unrelated Topic"), "Database Migration Plan")
        == KEEP
    )
    assert enforce_title_stability(update("React Components"), "Python Migration Tools") == KEEP


def test_title_stopwords_only_old_accepts_anything() -> None:
    op = update("Anything Else")
    assert enforce_title_stability(op, "A Session Title") == op


def test_title_empty_old_accepts() -> None:
    op = update("New Title")
    assert enforce_title_stability(op, "") == op


def test_title_dotted_version_token_overlaps() -> None:
    op = update("v2.1 rollout")
    assert enforce_title_stability(op, "Release v2.1 prep") == op


def test_title_empty_update_against_title_is_kept() -> None:
    assert enforce_title_stability(update(""), "Database Migration Plan") == KEEP


def test_title_lone_dot_is_a_token() -> None:
    # "[\d\.]+" matches a lone "." so two dotted initials share it.
    op = update("C. D.")
    assert enforce_title_stability(op, "A. B.") == op


def test_title_non_dict_and_non_update() -> None:
    assert enforce_title_stability(None, "Old Title") == KEEP
    assert enforce_title_stability("UPDATE", "Old Title") == KEEP
    append = {"op": "APPEND", "items": ["x"]}
    assert enforce_title_stability(append, "Old Title") is append
    assert enforce_title_stability(KEEP, "Old Title") is KEEP


def test_title_stopwords_constant() -> None:
    assert {"session", "title", "working", "memory", "plan", "notes"} <= WM_TITLE_STOPWORDS
    assert len(WM_TITLE_STOPWORDS) == 22


# --- anchors (§3.5) ---


def test_anchors_reference_example() -> None:
    text = (
        "Caroline met Marcus on 2024-01-20 and 15 March 2024; paid $2000 for 3 bedrooms at 6 AM "
        "because The Plan"
    )
    assert extract_lexical_anchors(text) == {
        "caroline",
        "marcus",
        "2024-01-20",
        "15 march 2024",
        "march",
        "$2000",
        "3 bedrooms",
        "6 am",
        "because",
        "plan",
    }


def test_anchors_mixed_case_names() -> None:
    assert extract_lexical_anchors("OpenAI McCloud JavaScript") == {
        "openai",
        "mccloud",
        "javascript",
    }


def test_anchors_stopwords_filtered() -> None:
    anchors = extract_lexical_anchors("The And Other Some These Those")
    assert not anchors & {"the", "other", "some", "these", "those", "and"}
    assert anchors == set()


def test_anchors_sources_case_insensitive_and_full_months_only() -> None:
    anchors = extract_lexical_anchors("we DECIDED on 2 Weeks, 1 pm, 3 Jan 2024 and 4 january 2024")
    assert {"decided", "2 weeks", "1 pm", "4 january 2024"} <= anchors
    assert "3 jan 2024" not in anchors
    assert extract_lexical_anchors("") == set() and extract_lexical_anchors(None) == set()


def test_anchor_stopwords_constant() -> None:
    assert {
        "key",
        "facts",
        "decisions",
        "session",
        "working",
        "memory",
        "who",
    } <= WM_ANCHOR_STOPWORDS


# --- Guard 2: Key Facts consolidation (§3.5) ---


def test_key_facts_non_dict_keep_and_unknown() -> None:
    old = bullets(["fact A"])
    assert enforce_key_facts_consolidation(None, old) == KEEP
    assert enforce_key_facts_consolidation(KEEP, old) is KEEP
    assert enforce_key_facts_consolidation({"op": "DELETE"}, old) == KEEP


def test_key_facts_small_section_append_passes_untouched() -> None:
    op = {"op": "APPEND", "items": ["fact A", 42]}
    assert enforce_key_facts_consolidation(op, bullets(["fact A"])) is op


def test_key_facts_oversized_append_capped_and_fresh_only() -> None:
    old = bullets([f"Fact {i}" for i in range(30)])
    op = {"op": "APPEND", "items": [f"New {c}" for c in "ABCDEFGHIJ"]}
    assert enforce_key_facts_consolidation(op, old) == {
        "op": "APPEND",
        "items": ["New A", "New B", "New C", "New D", "New E"],
    }
    dup = {"op": "APPEND", "items": ["Fact 0", "Fact 1"]}
    assert enforce_key_facts_consolidation(dup, old) == KEEP


def test_key_facts_oversized_append_stringifies_and_uses_content() -> None:
    old = bullets([f"Fact {i}" for i in range(30)])
    op = {"op": "APPEND", "items": [123, None, "Valid new fact", True]}
    assert enforce_key_facts_consolidation(op, old)["items"] == ["123", "Valid new fact", "True"]
    via_content = {"op": "APPEND", "content": "- from content"}
    assert enforce_key_facts_consolidation(via_content, old)["items"] == ["from content"]


def test_key_facts_oversized_by_tokens_alone() -> None:
    old = bullets(["word " * 800, "word " * 800])  # 2 bullets, ~2000 tokens
    op = {"op": "APPEND", "items": [f"n{i}" for i in range(8)]}
    assert len(enforce_key_facts_consolidation(op, old)["items"]) == 5


def test_key_facts_emergency_append_gives_sentinel_then_keep() -> None:
    old = bullets([f"Fact {i}" for i in range(55)])
    op = {"op": "APPEND", "items": ["Emergency fact A"]}
    assert enforce_key_facts_consolidation(op, old) == {
        "op": "APPEND",
        "items": [WM_CONSOLIDATION_SENTINEL],
    }
    with_sentinel = old + "\n- " + WM_CONSOLIDATION_SENTINEL
    assert enforce_key_facts_consolidation(op, with_sentinel) == KEEP


def test_key_facts_emergency_by_tokens() -> None:
    old = bullets(["word " * 1000] * 3)  # 3 bullets, ~3750 tokens
    op = {"op": "APPEND", "items": ["x"]}
    assert enforce_key_facts_consolidation(op, old)["items"] == [WM_CONSOLIDATION_SENTINEL]


def test_key_facts_update_over_empty_items_accepted() -> None:
    op = update("- anything")
    assert enforce_key_facts_consolidation(op, "### only a heading") is op


def test_key_facts_layer1_reject_salvages_fresh() -> None:
    old = bullets([f"Decision {i}: keep module_{i}.py" for i in range(1, 42)])
    op = update("- Consolidated summary of modules")
    assert enforce_key_facts_consolidation(op, old) == {
        "op": "APPEND",
        "items": ["Consolidated summary of modules"],
    }


def test_key_facts_layer1_reject_without_fresh_is_keep() -> None:
    old = bullets([f"Decision {i}" for i in range(1, 42)])
    assert enforce_key_facts_consolidation(update("- Decision 1"), old) == KEEP


def test_key_facts_ratio_boundary() -> None:
    old = bullets([f"item {i}" for i in range(20)])
    three = update(bullets(["item 0 merged", "item 1 merged", "item 2 merged"]))  # 0.15 exactly
    assert enforce_key_facts_consolidation(three, old) is three
    two = update(bullets(["item 0 merged", "item 1 merged"]))  # 0.10
    assert enforce_key_facts_consolidation(two, old)["op"] == "APPEND"


def test_key_facts_layer2_reject_and_accept() -> None:
    old = bullets(["Caroline lives in Portland", "Marcus moved to Sweden", "Jake has 2 kids"])
    vague = update(bullets(["Someone lives somewhere", "People moved"]))
    assert enforce_key_facts_consolidation(vague, old) == {
        "op": "APPEND",
        "items": ["Someone lives somewhere", "People moved"],
    }
    kept = update(bullets(["Caroline (Portland), Marcus (Sweden)", "Jake: 2 kids"]))
    assert enforce_key_facts_consolidation(kept, old) is kept


def test_key_facts_no_anchors_update_accepted() -> None:
    op = update("- fact A\n- fact C")
    assert enforce_key_facts_consolidation(op, "- fact A\n- fact B") is op


def test_key_facts_emergency_reject_suppresses_salvage_but_accepts_consolidation() -> None:
    old = bullets([f"Fact {i}" for i in range(55)])
    assert enforce_key_facts_consolidation(update("- Only one bullet."), old) == KEEP
    good = update(bullets([f"Fact {i} and Fact {i + 1}" for i in range(0, 55, 2)]))
    assert enforce_key_facts_consolidation(good, old) is good


# --- Guard 3: files no regression (§3.6) ---

FILES_OLD = "- src/main.py entry\n- config.yaml settings\n- src/utils.ts helpers"


def test_files_path_regex_examples() -> None:
    for text in ("src/main.py", "components/App.tsx", "openviking/session/session", "config.yaml"):
        assert WM_PATH_LIKE_RE.search(text), text
    assert WM_PATH_LIKE_RE.search("hello") is None


def test_files_url_partial_match() -> None:
    assert WM_PATH_LIKE_RE.findall("https://example.com/images/x.png") == ["com/images/x"]


def test_files_keep_and_append_pass_and_none() -> None:
    append = {"op": "APPEND", "items": ["x"]}
    assert enforce_files_no_regression(KEEP, FILES_OLD) is KEEP
    assert enforce_files_no_regression(append, FILES_OLD) is append
    assert enforce_files_no_regression(None, FILES_OLD) == KEEP


def test_files_update_keeping_all_paths_accepted() -> None:
    op = update(FILES_OLD + "\n- new.ts added")
    assert enforce_files_no_regression(op, FILES_OLD) is op


def test_files_update_dropping_path_kept() -> None:
    op = update("- src/main.py entry\n- config.yaml settings")
    assert enforce_files_no_regression(op, FILES_OLD) == KEEP


def test_files_update_dropping_and_adding_appends_new_paths() -> None:
    op = update("- src/main.py entry\n- config.yaml\n* brand_new/file.go the new one\n")
    assert enforce_files_no_regression(op, FILES_OLD) == {
        "op": "APPEND",
        "items": ["brand_new/file.go the new one"],
    }


def test_files_added_items_sorted() -> None:
    op = update("- zeta/z.py\n- alpha/a.py")
    assert enforce_files_no_regression(op, "- old/o.py")["items"] == ["alpha/a.py", "zeta/z.py"]


def test_files_url_drop_is_kept() -> None:
    old = "- docs/guide.md manual\n- https://example.com/images/unused.png screenshot"
    op = update("- docs/guide.md manual")
    assert enforce_files_no_regression(op, old) == KEEP


# --- Guard 4: append-only (§3.7) ---


def test_append_only_keep_and_append_pass() -> None:
    append = {"op": "APPEND", "items": ["existing fact"]}  # not deduped here
    assert enforce_append_only("## Key Facts & Decisions", KEEP, "- existing fact") is KEEP
    assert enforce_append_only("## Key Facts & Decisions", append, "- existing fact") is append


def test_append_only_update_demoted_to_fresh_append() -> None:
    op = update("- existing fact\n- brand new fact")
    result = enforce_append_only("## Key Facts & Decisions", op, "- existing fact")
    assert result == {"op": "APPEND", "items": ["brand new fact"]}


def test_append_only_all_duplicate_update_is_keep() -> None:
    assert (
        enforce_append_only("## Errors & Corrections", update("- existing fact"), "- existing fact")
        == KEEP
    )


def test_append_only_inner_markup_defeats_dedupe() -> None:
    op = update("- **Wrong port** used\n- new error")
    result = enforce_append_only("## Errors & Corrections", op, "- wrong port used")
    assert result == {"op": "APPEND", "items": ["**Wrong port** used", "new error"]}


@pytest.mark.parametrize("op", [None, {"op": "DELETE"}, "UPDATE", 3])
def test_append_only_invalid_is_keep(op: object) -> None:
    assert enforce_append_only("## Errors & Corrections", op, "- e") == KEEP


# --- Guard 5: open issues resolved (§3.8) ---

ISSUES_OLD = "- bug in auth module\n- flaky CI on windows"


def test_open_issues_all_preserved_plus_new() -> None:
    op = update(ISSUES_OLD + "\n- memory leak in worker")
    result = enforce_open_issues_resolved(op, ISSUES_OLD)
    assert result is op and "memory leak" in result["content"]


def test_open_issues_resolved_marker_keeps_text() -> None:
    op = update("- [resolved] bug in auth module\n- flaky CI on windows")
    assert enforce_open_issues_resolved(op, ISSUES_OLD) is op


def test_open_issues_dropped_item_restored_once() -> None:
    result = enforce_open_issues_resolved(update("- flaky CI on windows"), ISSUES_OLD)
    assert result == {
        "op": "UPDATE",
        "content": "- flaky CI on windows\n- [silently dropped, restored] bug in auth module",
    }


def test_open_issues_empty_update_restores_without_leading_newline() -> None:
    result = enforce_open_issues_resolved(update(""), "- lone issue")
    assert result["content"] == "- [silently dropped, restored] lone issue"


def test_open_issues_rewording_triggers_restore() -> None:
    result = enforce_open_issues_resolved(
        update("- authentication is buggy"), "- bug in auth module"
    )
    assert "silently dropped, restored" in result["content"] and "bug in auth" in result["content"]


def test_open_issues_tagged_items_not_restored_again() -> None:
    for old in (
        "- [silently dropped, restored] old issue",
        "- [silently dropped, restored] [silently dropped, restored] old issue",
    ):
        op = update("- something else")
        assert enforce_open_issues_resolved(op, old) is op


def test_open_issues_snippet_is_first_40_chars() -> None:
    long_item = "a" * 40 + " tail that may change"
    op = update("- " + "a" * 40 + " different tail")
    assert enforce_open_issues_resolved(op, "- " + long_item) is op
    changed_at_36 = update("- " + "a" * 35 + "ccccc and more")
    result = enforce_open_issues_resolved(changed_at_36, "- " + "a" * 35 + "bbbbb and more")
    assert result["content"].endswith("[silently dropped, restored] " + "a" * 35 + "bbbbb and more")


def test_open_issues_passthrough_cases() -> None:
    append = {"op": "APPEND", "items": ["x"]}
    assert enforce_open_issues_resolved(None, ISSUES_OLD) is None
    assert enforce_open_issues_resolved(KEEP, ISSUES_OLD) is KEEP
    assert enforce_open_issues_resolved(append, ISSUES_OLD) is append


def test_key_facts_layer2_threshold_is_seventy_percent() -> None:
    names = [
        "Alice",
        "Bruno",
        "Chloe",
        "Dmitri",
        "Elena",
        "Farid",
        "Greta",
        "Hiro",
        "Ines",
        "Jonas",
    ]
    old = bullets([f"{name} joined" for name in names])
    seven = update(bullets([f"{name} joined" for name in names[:7]]))
    assert enforce_key_facts_consolidation(seven, old) is seven
    six = update(bullets([f"{name} joined" for name in names[:6]]))
    assert enforce_key_facts_consolidation(six, old) == KEEP  # rejected; nothing fresh to salvage
