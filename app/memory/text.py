"""Text helpers of memory search: query terms, CJK spacing for FTS, MMR tokens and chunking.

Pure functions; the repository and the dialects turn their output into SQL (recall.md, Hybrid
search). CJK here means the Han, kana and Hangul blocks; their punctuation is not included.
"""

from __future__ import annotations

import re
import unicodedata

from app.core.tokens import estimate_text_tokens, text_weight

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ebef"
)
_CJK_RUN_RE = re.compile(f"[{_CJK}]+")
_CJK_CHAR_RE = re.compile(f"[{_CJK}]")


def is_cjk(char: str) -> bool:
    """Whether a character is CJK (indexed and queried one character at a time)."""
    return bool(_CJK_CHAR_RE.fullmatch(char))
_WORD_RE = re.compile(r"\w+")
# Words joined by "-" or "." (host names, versions, codes): "db-prod-7" is also one phrase term.
_COMPOUND_RE = re.compile(r"\w+(?:[-.]\w+)*")
# A space goes between a CJK character and any adjacent non-space character.
_CJK_GAP_RE = re.compile(f"(?<=[{_CJK}])(?=\\S)|(?<=\\S)(?=[{_CJK}])")

ENGLISH_STOPWORDS = frozenset(
    "a about above after again all also am an and any are as at be because been before being "
    "below between both but by can could did do does doing done down during each either else "
    "ever every few for from further get got had has have having he her here hers him his how i "
    "if in into is it its itself just let like me more most much must my no nor not now of off "
    "on once only or other our ours out over own please same she should so some such than that "
    "the their theirs them then there these they this those through to too under until up us "
    "very want was we were what when where which while who whom whose why will with would yes "
    "yet you your yours".split()
)

# Common Chinese function words. Single characters are limited to particles and pronouns that
# rarely sit inside content words; longer entries come first so that "我们" wins over "我".
CHINESE_STOPWORDS = tuple(
    sorted(
        "的 了 吗 呢 吧 啊 呀 哦 嘛 我 你 您 他 她 它 是 在 和 与 把 被 给 请 很 也 "
        "这个 那个 这些 那些 这样 那样 这里 那里 什么 怎么 怎样 如何 为什么 哪个 哪些 哪里 "
        "我们 你们 他们 她们 它们 自己 没有 有没有 是不是 非常 一下 一个 一些 可以 应该 "
        "如果 因为 所以 但是 然后 还是 或者 关于 通过 以及 并且 已经 请问".split(),
        key=len,
        reverse=True,
    )
)
_CHINESE_STOP_RE = re.compile("|".join(re.escape(w) for w in CHINESE_STOPWORDS))


def _terms_of_word(word: str) -> list[str]:
    """Split a \\w+ run into latin terms and CJK terms cut at Chinese function words."""
    terms: list[str] = []
    position = 0
    for run in _CJK_RUN_RE.finditer(word):
        terms.append(word[position : run.start()])
        terms.extend(_CHINESE_STOP_RE.split(run.group()))
        position = run.end()
    terms.append(word[position:])
    return [t for t in terms if t]


def _meaningful(term: str) -> bool:
    if _CJK_CHAR_RE.match(term):
        return True
    return len(term) > 1 and term not in ENGLISH_STOPWORDS


def query_terms(query: str, max_terms: int = 12) -> list[str]:
    """At most ``max_terms`` distinct meaningful terms of a query, in order of appearance."""
    # recall.md, Hybrid search step 2: never a whole prompt OR-ed into one query.
    if max_terms <= 0:
        return []
    terms: list[str] = []
    seen: set[str] = set()
    for compound in _COMPOUND_RE.findall(unicodedata.normalize("NFC", query).lower()):
        words = _WORD_RE.findall(compound)
        whole = [compound] if len(words) > 1 and compound.isascii() else []
        for term in whole + [t for word in words for t in _terms_of_word(word)]:
            if term in seen or not _meaningful(term):
                continue
            seen.add(term)
            terms.append(term)
            if len(terms) >= max_terms:
                return terms
    return terms


def cjk_spaced(text: str) -> str:
    """The text with every CJK character set apart by spaces, for the unicode61 tokenizer."""
    # recall.md, Hybrid search step 2: CJK text segmented so that Chinese queries match.
    return _CJK_GAP_RE.sub(" ", text)


def _phrase(term: str) -> str:
    return '"' + cjk_spaced(term).replace('"', '""') + '"'


def fts_match_expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression: the terms as quoted phrases joined by OR ("" for none)."""
    return " OR ".join(_phrase(t.strip()) for t in terms if t.strip())


def tokens_for_mmr(text: str) -> set[str]:
    """Lowercase word tokens of a text; a CJK run contributes its character bigrams."""
    # openclaw.md §2.4 step 8 (Jaccard over token sets); CJK bigrams keep Chinese comparable.
    tokens: set[str] = set()
    for word in _WORD_RE.findall(unicodedata.normalize("NFC", text).lower()):
        position = 0
        for run in _CJK_RUN_RE.finditer(word):
            if run.start() > position:
                tokens.add(word[position : run.start()])
            chars = run.group()
            tokens.update(chars[i : i + 2] for i in range(max(1, len(chars) - 1)))
            position = run.end()
        if position < len(word):
            tokens.add(word[position:])
    return tokens


# A piece of a chunk: its text, its token weight, and what joins it to the piece before it
# ("\n" between lines, "" between the segments of one over-long line).
_Unit = tuple[str, float, str]


def _weight(text: str) -> float:
    """Unrounded token weight of a text; ``estimate_text_tokens`` is its ceiling."""
    return text_weight(text)


def _split_long_line(line: str, size: int) -> list[str]:
    """Cut a line into segments of at most ``size`` tokens, at spaces where possible."""
    pieces: list[str] = []
    current, used = "", 0.0
    for word in re.findall(r"\S+\s*|\s+", line):
        word_weight = _weight(word)
        parts = [(word, word_weight)] if word_weight <= size else [(c, _weight(c)) for c in word]
        for part, weight in parts:
            if current and used + weight > size:
                pieces.append(current)
                current, used = "", 0.0
            current += part
            used += weight
    if current:
        pieces.append(current)
    return pieces


def _units(text: str, max_tokens: int, overlap: int) -> list[_Unit]:
    """The pieces of a text; an over-long line becomes overlap-sized segments."""
    units: list[_Unit] = []
    for line in text.split("\n"):
        if _weight(line) <= max_tokens:
            units.append((line, _weight(line) + 0.25, "\n"))
            continue
        segments = _split_long_line(line, overlap or max_tokens)
        units.append((segments[0], _weight(segments[0]) + 0.25, "\n"))
        units.extend((segment, _weight(segment), "") for segment in segments[1:])
    return units


def _paragraph_cut(units: list[_Unit]) -> int:
    """Where to end a full chunk: after its last blank line in the second half, else at the end."""
    total = _total(units)
    used = 0.0
    cut = len(units)
    for index, (piece, weight, _) in enumerate(units):
        used += weight
        if not piece.strip() and used * 2 >= total and index + 1 < len(units):
            cut = index + 1
    return cut


def _overlap_tail(units: list[_Unit], overlap: int, cap: float) -> list[_Unit]:
    """Trailing pieces worth at most ``overlap`` tokens; else the last piece alone, up to ``cap``."""
    tail: list[_Unit] = []
    used = 0.0
    for unit in reversed(units):
        if used + unit[1] > overlap:
            break
        tail.insert(0, unit)
        used += unit[1]
    if not tail and overlap > 0 and units and units[-1][1] <= cap:
        tail = [units[-1]]  # a line longer than the overlap is carried whole
    return tail


def _emit(chunks: list[str], units: list[_Unit]) -> None:
    text = "".join(sep + piece for piece, _, sep in units)[len(units[0][2]) :] if units else ""
    text = text.strip("\n")
    if text.strip():
        chunks.append(text)


def _total(units: list[_Unit]) -> float:
    return sum(weight for _, weight, _ in units)


def chunk_text(text: str, max_tokens: int = 400, overlap_tokens: int = 80) -> list[str]:
    """Split a memory into chunks of about ``max_tokens`` with ``overlap_tokens`` carried over."""
    # recall.md, Hybrid search (chunks of ~400 tokens with 80 overlap, openclaw.md §2.2).
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not text.strip():
        return []
    if estimate_text_tokens(text) <= max_tokens:
        return [text]
    overlap = min(max(0, overlap_tokens), max_tokens - 1)
    chunks: list[str] = []
    current: list[_Unit] = []
    for unit in _units(text, max_tokens, overlap):
        if current and _total(current) + unit[1] > max_tokens:
            cut = _paragraph_cut(current)
            if _total(current[cut:]) + unit[1] > max_tokens:
                cut = len(current)  # what follows the paragraph would not fit with this piece
            _emit(chunks, current[:cut])
            current = _overlap_tail(current[:cut], overlap, max_tokens / 2) + current[cut:]
            while current and _total(current) + unit[1] > max_tokens:
                current.pop(0)  # only carried overlap can go here
        current.append(unit)
    _emit(chunks, current)
    return chunks
