"""The seven-section Working Memory document: parsing, bullets, canonical rendering.

Rules come from docs/peers.md, OpenViking §2.6 / §3.1 / §3.2 and docs/working-memory.md ("Document",
"Update flow").
"""

from __future__ import annotations

import re

from app.core.rules.tokens import estimate_text_tokens

WM_TITLE_LINE = "# Working Memory"

# Order is fixed (docs/peers.md, OpenViking §3.1).
WM_SEVEN_SECTIONS: list[str] = [
    "Session Title",
    "Current State",
    "Task & Goals",
    "Key Facts & Decisions",
    "Files & Context",
    "Errors & Corrections",
    "Open Issues",
]

ABSTRACT_MAX_CHARS = 200
WM_TOKEN_BUDGET = 12_000  # docs/working-memory.md: the ~12,000-token overall budget
CURRENT_STATE_MAX_CHARS = 600

_BULLET_RE = re.compile(r"^(?:[-*]|\d+[\.)])\s+(.*)$")
_FENCE_RE = re.compile(r"^\s*```[\w-]*\s*$")
_SENTENCE_END_RE = re.compile(r"[.!?;](?=\s)|[。！？；]")


def section_key(name: str) -> str:
    """The parsed-dict key of a section name, e.g. ``"## Open Issues"``."""
    return f"## {name}"


def parse_wm_sections(text: str | None) -> dict[str, str]:
    """Split a WM into ``{"## <name>": body}``; text before the first header is dropped."""
    # docs/peers.md, OpenViking §3.2: a stripped line starting with "## " opens a section (case-sensitive).
    sections: dict[str, str] = {}
    if not text:
        return sections
    current: str | None = None
    buffer: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            if current is not None:
                sections[current] = "\n".join(buffer).strip()
            current, buffer = stripped, []
        elif current is not None:
            buffer.append(line)
    if current is not None:
        sections[current] = "\n".join(buffer).strip()
    return sections


def extract_bullet_items(text: str | None) -> list[str]:
    """Items of a section body: bullet/numbered lines unwrapped, plain lines kept, headings skipped."""
    items: list[str] = []
    if not text:
        return items
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _BULLET_RE.match(stripped)
        item = match.group(1) if match else stripped
        if item:
            items.append(item)
    return items


def render_wm(bodies: dict[str, str] | None) -> str:
    """Canonical rendering of the seven sections (docs/working-memory.md "Rendering")."""
    bodies = bodies or {}
    lines = [WM_TITLE_LINE, ""]
    for name in WM_SEVEN_SECTIONS:
        lines.append(section_key(name))
        body = bodies.get(name) or ""
        if body:
            lines.append(body)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def is_wm_v2(text: str | None) -> bool:
    """True when any ``## <section>`` substring is present (docs/peers.md, OpenViking §2.6, legacy detection)."""
    if not text:
        return False
    return any(section_key(name) in text for name in WM_SEVEN_SECTIONS)


def _is_italic_description(line: str) -> bool:
    # The CREATE prompt keeps a "_..._" description line under each header (docs/peers.md, OpenViking §3.1).
    return len(line) >= 2 and line[0] == line[-1] and line[0] in "_*" and not line.startswith("**")


def shorten(text: str, limit: int) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def split_sentences(text: str) -> list[str]:
    """Non-empty sentences of each line, split after ASCII and CJK sentence ends."""
    out: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in _SENTENCE_END_RE.finditer(line):
            out.append(line[start : match.end()].strip())
            start = match.end()
        out.append(line[start:].strip())
    return [sentence for sentence in out if sentence]


def _first_content_line(body: str) -> str:
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or _is_italic_description(stripped):
            continue
        match = _BULLET_RE.match(stripped)
        return match.group(1) if match else stripped
    return ""


def extract_abstract(wm_text: str | None) -> str:
    """One-line abstract: the Session Title's body, else the first non-heading line."""
    # docs/working-memory.md "Update flow" step 5 (deliberately differs from the reference).
    if not wm_text:
        return ""
    title_body = parse_wm_sections(wm_text).get(section_key("Session Title"), "")
    line = _first_content_line(title_body) or _first_content_line(wm_text)
    if not line:
        fallback = [
            s.strip() for s in wm_text.splitlines() if s.strip() and not s.strip().startswith("#")
        ]
        line = fallback[0] if fallback else ""
    return shorten(line, ABSTRACT_MAX_CHARS)


def _strip_outer_fence(text: str) -> str:
    lines = text.strip().splitlines()
    if len(lines) >= 2 and _FENCE_RE.match(lines[0]) and lines[-1].strip() == "```":
        lines = lines[1:-1]
    return "\n".join(lines)


def _canonical_name(header: str) -> str | None:
    # Lenient on case and spacing here only: a CREATE answer is free text.
    wanted = " ".join(header[3:].split()).lower()
    for name in WM_SEVEN_SECTIONS:
        if name.lower() == wanted:
            return name
    return None


def _split_blocks(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    preamble: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            blocks.append((stripped, []))
        elif blocks:
            blocks[-1][1].append(line)
        elif stripped and not stripped.startswith("# "):
            preamble.append(line)
    return preamble, blocks


def normalize_created_wm(text: str | None) -> str:
    """Canonical 7-section doc from a CREATE answer: missing sections empty, unknown ones folded."""
    # docs/working-memory.md "Update flow" step 1: unknown "##" sections go into Key Facts.
    preamble, blocks = _split_blocks(_strip_outer_fence(text or ""))
    bodies: dict[str, list[str]] = {name: [] for name in WM_SEVEN_SECTIONS}
    folded: list[str] = []
    for header, lines in blocks:
        body = "\n".join(lines).strip()
        name = _canonical_name(header)
        if name is not None:
            if body:
                bodies[name].append(body)
        elif body:
            folded.append(f"### {header[3:].strip()}\n{body}")
    if not any(_canonical_name(h) for h, _ in blocks) and "\n".join(preamble).strip():
        # Nothing recognisable: keep the answer rather than lose it.
        folded.insert(0, "\n".join(preamble).strip())
    bodies["Key Facts & Decisions"].extend(folded)
    return render_wm({name: "\n".join(parts) for name, parts in bodies.items()})


def trim_free_sections(doc: str, budget: int = WM_TOKEN_BUDGET) -> str:
    """Shrink Current State, then drop the oldest Task & Goals lines (≥1 kept), until it fits."""
    # Only the free sections shrink; guarded sections keep everything (docs/working-memory.md).
    if estimate_text_tokens(doc) <= budget:
        return doc
    parsed = parse_wm_sections(doc)
    bodies = {name: parsed.get(section_key(name), "") for name in WM_SEVEN_SECTIONS}
    bodies["Current State"] = shorten(bodies["Current State"], CURRENT_STATE_MAX_CHARS // 2)
    goals = bodies["Task & Goals"].splitlines()
    rendered = render_wm(bodies)
    over = estimate_text_tokens(rendered) - budget
    while over > 0 and len(goals) > 1:
        saved = 0
        while goals and len(goals) > 1 and saved < over:
            saved += estimate_text_tokens(goals.pop(0)) + 1
        bodies["Task & Goals"] = "\n".join(goals)
        rendered = render_wm(bodies)
        over = estimate_text_tokens(rendered) - budget
    return rendered
