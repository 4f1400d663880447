"""The days that the relative dates of the prompt's own history meant (docs/recall.md, Dates in the
recent turns). Pure.

The history is returned as it was said, so "last Saturday" in a turn of three weeks ago still reads
"last Saturday". Recalled turns carry their days; for the turns the prompt already shows, the
envelope adds one line per sentence that both speaks of a relative day and shares a word with the
question: the sentence with the day written beside the expression, and when it was said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from app.core.rules.dates import host_time
from app.core.rules.messages import Message, message_text, role_of
from app.search.text.date_terms import day_written_beside, relative_dates, with_resolved_dates
from app.search.text.query import document_tokens, parse_query, speaker_label

HEADER = (
    "## Dates in the Recent Turns\n\n"
    "Relative dates in the turns above, with the day each meant when it was said:\n"
)
MAX_NOTES = 6
NOTE_MAX_CHARS = 240
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def _question_tokens(query: str, speakers: set[str]) -> set[str]:
    terms = parse_query(query).terms
    return {t.token for t in terms if t.kind != "date" and t.token not in speakers}


def _speakers(texts: Sequence[str]) -> set[str]:
    """The words of the history's speaker labels ("Caroline: ..."): a name is who said a turn,
    not what it is about."""
    return {token for text in texts for token in document_tokens(speaker_label(text))}


def history_date_notes(messages: Sequence[Message], query: str) -> str:
    """The section for the history's dated sentences that share a word with ``query``; "" if none."""
    said: list[tuple[str, datetime]] = []
    for message in messages:
        if not isinstance(message, dict) or role_of(message) not in ("user", "assistant"):
            continue
        moment = host_time(message.get("timestamp"))
        text = message_text(message)
        if moment is not None and text:
            said.append((text, moment))
    wanted = _question_tokens(query, _speakers([t for t, _ in said]))
    if not wanted:
        return ""
    found: list[tuple[int, int, str]] = []
    for order, (text, moment) in enumerate(said):
        label = speaker_label(text).strip()
        for sentence in (s.strip() for s in _SENTENCE_RE.findall(text[len(label) :])):
            shared = len(wanted & set(document_tokens(sentence)))
            if shared and relative_dates(sentence, moment.date()):
                found.append((-shared, -order, _note(label, sentence, moment)))
    notes = [note for _, _, note in sorted(found)[:MAX_NOTES]]
    return HEADER + "\n" + "\n".join(dict.fromkeys(notes)) if notes else ""


def _note(label: str, sentence: str, moment: datetime) -> str:
    resolved = with_resolved_dates(sentence, moment.date())
    text = f"{label} {resolved}".strip() if label else resolved
    if len(text) > NOTE_MAX_CHARS:
        text = text[: NOTE_MAX_CHARS - 1] + "…"
    return f"- [said {day_written_beside(moment.date().isoformat(), sentence)}] {text}"
