"""Consolidation reminders (docs/peers.md, OpenViking §3.9, §4.2, §4.3)."""

from __future__ import annotations

from app.working_memory.document import render_wm
from app.working_memory.reminders import build_section_reminders


def bullets(prefix: str, n: int) -> str:
    return "\n".join(f"- {prefix} {i}" for i in range(n))


def test_key_facts_over_threshold_warns() -> None:
    reminders = build_section_reminders(render_wm({"Key Facts & Decisions": bullets("fact", 34)}))
    assert reminders.startswith("<section_size_warnings>\n")
    assert reminders.endswith("\n</section_size_warnings>")
    assert "Key Facts" in reminders and "34 bullets" in reminders
    assert "MUST be consolidated" in reminders
    assert "<=25 bullets" in reminders and "<=1500 tokens" in reminders


def test_exact_warning_text() -> None:
    body = bullets("fact", 26)
    reminders = build_section_reminders(render_wm({"Task & Goals": body}))
    assert reminders == (
        "<section_size_warnings>\n"
        'WARNING: "Task & Goals" has 26 bullets (~63 tokens).\n'
        "This section MUST be consolidated via UPDATE. Group related facts by topic into category "
        "summaries. Preserve names, dates, and exact values but merge repetitive events into "
        "patterns.\n"
        "Target: <=25 bullets, <=1500 tokens.\n"
        "</section_size_warnings>"
    )


def test_errors_section_never_flagged() -> None:
    reminders = build_section_reminders(render_wm({"Errors & Corrections": bullets("error", 39)}))
    assert "Errors" not in reminders
    assert reminders == ""


def test_under_threshold_is_empty() -> None:
    assert build_section_reminders(render_wm({"Key Facts & Decisions": bullets("fact", 9)})) == ""
    assert build_section_reminders(render_wm({"Key Facts & Decisions": bullets("fact", 25)})) == ""
    assert build_section_reminders("") == ""
    assert build_section_reminders(None) == ""


def test_token_threshold_alone_warns() -> None:
    body = "- " + "word " * 1300  # one bullet, > 1500 tokens
    reminders = build_section_reminders(render_wm({"Current State": body}))
    assert '"Current State" has 1 bullets' in reminders


def test_multiple_warnings_joined_by_blank_line() -> None:
    doc = render_wm(
        {"Key Facts & Decisions": bullets("fact", 41), "Open Issues": bullets("issue", 30)}
    )
    reminders = build_section_reminders(doc)
    assert reminders.count("WARNING:") == 2
    assert '1500 tokens.\n\nWARNING: "Open Issues" has 30 bullets' in reminders


def test_key_facts_flagged_files_with_image_urls_not() -> None:
    files = "\n".join(f"- https://example.com/images/photo_{i}.png" for i in range(22))
    doc = render_wm({"Key Facts & Decisions": bullets("Decision", 41), "Files & Context": files})
    reminders = build_section_reminders(doc)
    assert '"Key Facts & Decisions" has 41 bullets' in reminders
    assert "consolidated via UPDATE" in reminders
    assert "Files & Context" not in reminders
