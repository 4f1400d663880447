"""Consolidation reminders injected into the UPDATE prompt (docs/peers.md, OpenViking §3.9)."""

from __future__ import annotations

from app.core.rules.tokens import estimate_text_tokens
from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    extract_bullet_items,
    parse_wm_sections,
    section_key,
)
from app.working_memory.guards import (
    WM_APPEND_ONLY_SECTIONS,
    WM_SECTION_BULLET_THRESHOLD,
    WM_SECTION_TOKEN_THRESHOLD,
)


def _warning(name: str, bullets: int, tokens: int) -> str:
    return (
        f'WARNING: "{name}" has {bullets} bullets (~{tokens} tokens).\n'
        "This section MUST be consolidated via UPDATE. Group related facts by topic into category "
        "summaries. Preserve names, dates, and exact values but merge repetitive events into "
        "patterns.\n"
        f"Target: <={WM_SECTION_BULLET_THRESHOLD} bullets, <={WM_SECTION_TOKEN_THRESHOLD} tokens."
    )


def build_section_reminders(overview: str | None) -> str:
    """``<section_size_warnings>`` for each oversized section of the prior WM, or ``""``."""
    if not overview:
        return ""
    parsed = parse_wm_sections(overview)
    warnings: list[str] = []
    for name in WM_SEVEN_SECTIONS:
        key = section_key(name)
        # The append-only section is never asked to consolidate (§3.9).
        if key not in parsed or name in WM_APPEND_ONLY_SECTIONS:
            continue
        body = parsed[key]
        items = extract_bullet_items(body)
        tokens = estimate_text_tokens(body)
        if len(items) > WM_SECTION_BULLET_THRESHOLD or tokens > WM_SECTION_TOKEN_THRESHOLD:
            warnings.append(_warning(name, len(items), tokens))
    if not warnings:
        return ""
    return "<section_size_warnings>\n" + "\n\n".join(warnings) + "\n</section_size_warnings>"
