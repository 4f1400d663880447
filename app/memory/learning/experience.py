"""The experience format of agent memories (docs/peers.md, OpenViking §6.3): Situation, Approach and Reflect
sections of ``-`` bullets, read leniently from whatever a model wrote. Pure."""

from __future__ import annotations

import re
from typing import Any

from app.memory.store.content_key import normalise_text

EXPERIENCE_SECTIONS = ("Situation", "Approach", "Reflect")
MAX_APPROACH_BULLETS = 8

_SECTION_ALIASES = {
    **dict.fromkeys(
        ("situation", "context", "trigger", "scope", "情境", "场景", "情况"), "Situation"
    ),
    **dict.fromkeys(
        ("approach", "do", "dos", "steps", "actions", "做法", "方法", "步骤"), "Approach"
    ),
    **dict.fromkeys(
        (
            "reflect",
            "reflection",
            "avoid",
            "check",
            "don'ts",
            "donts",
            "guardrails",
            "lessons",
            "反思",
            "避免",
            "教训",
        ),
        "Reflect",
    ),
}
_LABEL_RE = re.compile(r"^\**([^:：*]{1,30}?)\**\s*[:：]\s*\**\s*(.*)$")
_BULLET_RE = re.compile(r"^(?:[-*•+]|\d+[.)、])\s+")


def strip_bullet(line: str) -> str:
    """The line without its bullet or number marker and surrounding whitespace."""
    return _BULLET_RE.sub("", line.strip()).strip()


def normalise_experience(content: Any, situation_hint: str = "") -> str | None:
    """Exactly Situation / Approach / Reflect of ``-`` bullets; None without Approach or Reflect."""
    sections = _experience_sections(content)
    if not sections["Situation"] and situation_hint.strip():
        sections["Situation"] = [" ".join(situation_hint.split())]
    seen: set[str] = set()
    for name in EXPERIENCE_SECTIONS:
        unique = []
        for bullet in sections[name]:
            if (key := normalise_text(bullet)) and key not in seen:
                seen.add(key)
                unique.append(bullet)
        sections[name] = unique[:MAX_APPROACH_BULLETS] if name == "Approach" else unique
    if not all(sections.values()):
        return None
    return "\n\n".join(
        f"## {name}\n" + "\n".join(f"- {b}" for b in sections[name]) for name in EXPERIENCE_SECTIONS
    )


def _experience_sections(content: Any) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {name: [] for name in EXPERIENCE_SECTIONS}
    if isinstance(content, dict):
        for key, value in content.items():
            if section := _SECTION_ALIASES.get(str(key).strip().lower()):
                lines = value if isinstance(value, list) else str(value or "").splitlines()
                sections[section].extend(b for b in (strip_bullet(str(v)) for v in lines) if b)
        return sections
    current = "Situation"  # text before the first heading describes the situation
    for line in str(content or "").splitlines():
        heading = _heading(line)
        if heading is not None:
            current, line = heading
        if text := strip_bullet(line):
            sections[current].append(text)
    return sections


def without_trailing_parenthetical(text: str) -> str:
    """A stripped text without a parenthetical that ends it, and the blank space before it: what
    ``re.sub(r"\\s*[(（][^)）]*[)）]$", "", text)`` gives, found in linear time (that pattern,
    tried at every opening parenthesis, took quadratic time on a line of them)."""
    if not text or text[-1] not in ")）":
        return text
    body = text[:-1]
    after_last_close = max(body.rfind(")"), body.rfind("）")) + 1
    opens = [
        i for i in (body.find("(", after_last_close), body.find("（", after_last_close)) if i >= 0
    ]
    return text[: min(opens)].rstrip() if opens else text


def _heading(line: str) -> tuple[str, str] | None:
    """(section, text after the label) when the line names a section."""
    bare = line.strip().lstrip("#").strip().strip("*").strip().rstrip(":：").strip("*").strip()
    bare = without_trailing_parenthetical(bare)  # "Approach (DOs)"
    if section := _SECTION_ALIASES.get(bare.lower()):
        return section, ""
    match = _LABEL_RE.match(line.strip())
    if (
        match
        and not line.lstrip().startswith("#")
        and (section := _SECTION_ALIASES.get(match.group(1).strip().lower()))
    ):
        return section, match.group(2)
    return None
