"""The 7-section document: parsing, bullets, rendering, v2 detection, abstract, normalisation."""

from __future__ import annotations

from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    extract_abstract,
    extract_bullet_items,
    is_wm_v2,
    normalize_created_wm,
    parse_wm_sections,
    render_wm,
    shorten,
    split_sentences,
    trim_free_sections,
)


def test_seven_sections_order_is_fixed() -> None:
    assert WM_SEVEN_SECTIONS == [
        "Session Title",
        "Current State",
        "Task & Goals",
        "Key Facts & Decisions",
        "Files & Context",
        "Errors & Corrections",
        "Open Issues",
    ]


def test_render_canonical_format_with_empty_sections() -> None:
    doc = render_wm({"Session Title": "My Session", "Current State": "Idle"})
    assert doc == (
        "# Working Memory\n\n"
        "## Session Title\nMy Session\n\n"
        "## Current State\nIdle\n\n"
        "## Task & Goals\n\n"
        "## Key Facts & Decisions\n\n"
        "## Files & Context\n\n"
        "## Errors & Corrections\n\n"
        "## Open Issues\n"
    )


def test_render_strips_trailing_whitespace_to_one_newline() -> None:
    assert render_wm({"Open Issues": "- x\n\n  "}).endswith("## Open Issues\n- x\n")


def test_render_empty_doc_has_all_headers_and_final_newline() -> None:
    doc = render_wm({})
    assert doc.endswith("## Open Issues\n")
    assert [line for line in doc.splitlines() if line.startswith("## ")] == [
        f"## {name}" for name in WM_SEVEN_SECTIONS
    ]


def test_parse_round_trips_title_and_state() -> None:
    parsed = parse_wm_sections(render_wm({"Session Title": "My Session", "Current State": "Idle"}))
    assert parsed["## Session Title"] == "My Session"
    assert parsed["## Current State"] == "Idle"
    assert parsed["## Task & Goals"] == ""


def test_parse_empty_and_none() -> None:
    assert parse_wm_sections("") == {}
    assert parse_wm_sections(None) == {}


def test_parse_preserves_multiline_bullets() -> None:
    parsed = parse_wm_sections("## Open Issues\n- one\n- two\n  continued\n")
    assert parsed["## Open Issues"] == "- one\n- two\n  continued"


def test_parse_drops_preamble_and_keys_are_stripped_header_lines() -> None:
    parsed = parse_wm_sections("# Working Memory\nintro\n  ## Key Facts & Decisions  \n- a\n")
    assert parsed == {"## Key Facts & Decisions": "- a"}


def test_parse_triple_hash_is_not_a_header_and_matching_is_case_sensitive() -> None:
    parsed = parse_wm_sections("## Session Title\nT\n### Sub\nbody\n## session title\nx\n")
    assert parsed["## Session Title"] == "T\n### Sub\nbody"
    assert parsed["## session title"] == "x"


def test_bullets_dash_and_star() -> None:
    assert extract_bullet_items("- foo\n- bar") == ["foo", "bar"]
    assert extract_bullet_items("* star") == ["star"]


def test_bullets_numbered() -> None:
    assert extract_bullet_items("1. first\n3) third") == ["first", "third"]


def test_bullets_plain_lines_and_headings() -> None:
    assert extract_bullet_items("plain line\n- dash") == ["plain line", "dash"]
    assert extract_bullet_items("# heading\n\n- real") == ["real"]
    assert extract_bullet_items("### sub\n- real") == ["real"]


def test_bullets_empty_and_none() -> None:
    assert extract_bullet_items("") == []
    assert extract_bullet_items(None) == []
    assert extract_bullet_items("-   \n\n") == ["-"]


def test_is_wm_v2_full_and_partial() -> None:
    assert is_wm_v2(render_wm({}))
    assert is_wm_v2("## Session Title\nx\n## Current State\ny")


def test_is_wm_v2_is_a_substring_test() -> None:
    assert is_wm_v2("### Session Title\nx")


def test_is_wm_v2_legacy_and_empty() -> None:
    assert not is_wm_v2("# Session Summary\n\n**Overview**: 3 turns, 5 messages")
    assert not is_wm_v2("plain text")
    assert not is_wm_v2("")
    assert not is_wm_v2(None)


def test_abstract_is_title_body_skipping_italic_description() -> None:
    doc = render_wm(
        {
            "Session Title": "_A short and distinctive title_\nFix login bug in auth",
            "Current State": "x",
        }
    )
    assert extract_abstract(doc) == "Fix login bug in auth"


def test_abstract_falls_back_to_first_non_heading_line() -> None:
    doc = render_wm({"Current State": "Working on the parser"})
    assert extract_abstract(doc) == "Working on the parser"
    assert extract_abstract("# Session Summary\n\n**Overview**: 3 turns") == "**Overview**: 3 turns"


def test_abstract_is_one_bounded_line() -> None:
    abstract = extract_abstract(render_wm({"Session Title": "word " * 100}))
    assert "\n" not in abstract
    assert len(abstract) <= 200
    assert abstract.endswith("…")
    assert extract_abstract("") == ""
    assert extract_abstract(None) == ""


def test_normalize_adds_missing_sections_empty() -> None:
    doc = normalize_created_wm("# Working Memory\n\n## Session Title\nT\n\n## Open Issues\n- x\n")
    parsed = parse_wm_sections(doc)
    assert list(parsed) == [f"## {name}" for name in WM_SEVEN_SECTIONS]
    assert parsed["## Session Title"] == "T"
    assert parsed["## Open Issues"] == "- x"
    assert parsed["## Current State"] == ""


def test_normalize_folds_unknown_sections_into_key_facts() -> None:
    doc = normalize_created_wm(
        "## Session Title\nT\n## Key Facts & Decisions\n- a\n## Extra\n- b\n"
    )
    parsed = parse_wm_sections(doc)
    assert "## Extra" not in parsed
    key_facts = parsed["## Key Facts & Decisions"]
    assert "- a" in key_facts and "- b" in key_facts and "Extra" in key_facts
    assert extract_bullet_items(key_facts) == ["a", "b"]


def test_normalize_is_canonical_and_idempotent() -> None:
    canonical = render_wm({"Session Title": "T", "Key Facts & Decisions": "- a"})
    assert normalize_created_wm(canonical) == canonical
    assert normalize_created_wm(normalize_created_wm(canonical)) == canonical


def test_normalize_strips_code_fence_and_header_case() -> None:
    doc = normalize_created_wm("```markdown\n# Working Memory\n## session title\nT\n```")
    assert parse_wm_sections(doc)["## Session Title"] == "T"
    assert "```" not in doc


def test_normalize_keeps_headerless_answer() -> None:
    doc = normalize_created_wm("Some free text about the port 8080.")
    assert "port 8080" in parse_wm_sections(doc)["## Key Facts & Decisions"]
    assert normalize_created_wm("") == render_wm({})


def test_shorten_and_sentences() -> None:
    assert shorten("a\n  b", 10) == "a b"
    assert shorten("abcdefghij", 5) == "abcd…"
    assert split_sentences("One. Two? 三。四") == ["One.", "Two?", "三。", "四"]


def test_trim_free_sections_keeps_guarded_sections() -> None:
    goals = "\n".join(f"- goal {i} " + "x" * 200 for i in range(100))
    doc = render_wm(
        {"Task & Goals": goals, "Files & Context": "- src/a.py", "Current State": "s" * 900}
    )
    trimmed = trim_free_sections(doc, budget=2000)
    parsed = parse_wm_sections(trimmed)
    assert parsed["## Files & Context"] == "- src/a.py"
    assert "goal 99" in parsed["## Task & Goals"]
    assert "goal 0 " not in parsed["## Task & Goals"]
    assert len(parsed["## Current State"]) <= 300
    assert trim_free_sections(trimmed, budget=100_000) == trimmed
