"""What /assemble tells recall beside the query: the messages the prompt already shows, the tokens
the history leaves, and a query widened when the prompt alone says too little. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.archives.search.recall_render import shown_key
from app.assembly.budget import reserved_tokens, resolve_budget
from app.core.rules.messages import Message, message_text, role_of
from app.core.rules.sanitize import sanitize_message_for_capture
from app.search.text.query import parse_query

# A prompt with fewer search terms than this ("what about that one?") is read with the turns
# before it: alone it would find whatever mentions "one".
MIN_QUERY_TERMS = 2
WIDENING_TURNS = 2
WIDENING_CHARS = 400
# The part of a message its key is made from: keys compare the first characters only.
_KEY_SOURCE_CHARS = 4000


def shown_keys(messages: Sequence[Message]) -> tuple[str, ...]:
    """The key of each message the prompt holds, as capture would store its text: recall leaves
    those turns out."""
    keys: list[str] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        clean = sanitize_message_for_capture(message)
        text = message_text(clean)[:_KEY_SOURCE_CHARS] if clean is not None else ""
        if text.strip():
            keys.append(shown_key(text))
    return tuple(dict.fromkeys(keys))


def widened_query(query: str, messages: Sequence[Message]) -> str:
    """The query, with the latest user turns of the history after it, each as a sentence, when it
    holds fewer than ``MIN_QUERY_TERMS`` search terms."""
    if len(parse_query(query).terms) >= MIN_QUERY_TERMS:
        return query
    recent: list[str] = []
    for message in reversed(messages):
        if len(recent) >= WIDENING_TURNS:
            break
        if isinstance(message, dict) and role_of(message) == "user":
            clean = sanitize_message_for_capture(message)
            text = " ".join(message_text(clean).split()) if clean is not None else ""
            if text:
                recent.append(text[:WIDENING_CHARS])
    # As sentences of their own: ranked search ranks a query's sentences one by one
    # (app.core.query.clauses), so the prompt's few words are not drowned by the turns' many.
    return " ".join([query, *(f"{t.rstrip('.')}." for t in reversed(recent))]) if recent else query


def history_tokens(sent: Sequence[Message], sent_tokens: int, omitted: int) -> int:
    """The tokens of the whole history when the client sent only its newest messages and the count
    of those it left out: the ones left out are taken to be as long as the ones sent on average."""
    if omitted <= 0 or not sent:
        return sent_tokens
    return sent_tokens + round(sent_tokens / len(sent) * omitted)


def recall_budget_tokens(token_budget: object, history_tokens: int, fill_share: float) -> int:
    """The tokens recall may add: the budget less its reserve, times ``fill_share``, less what the
    history already takes (never below 0)."""
    budget = resolve_budget(token_budget)
    fill = (budget - reserved_tokens(budget)) * fill_share
    return max(0, int(fill) - history_tokens)
