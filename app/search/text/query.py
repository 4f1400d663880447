"""Query understanding shared by archive search, memory search and recall. Pure.

A query (a keyword list or a natural question, English or Chinese) becomes a bounded list of
weighted terms: Unicode words with punctuation stripped (``museum?`` is ``museum``), English and
Chinese stop words dropped (``did``, ``what``, ``的``), light suffix stemming so ``visited`` meets
``visit``, CJK runs cut at function words and split into character pairs (no segmenter needed),
quoted parts kept as exact phrases and written dates normalised to ISO days. Documents are
tokenised by the same rules (``document_tokens``) so that both sides agree.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from app.search.text.date_terms import absolute_dates, relative_dates, without_dates

CJK_CHARS = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ebef"
)
_CJK_RUN_RE = re.compile(f"[{CJK_CHARS}]+")
_WORD_RE = re.compile(r"\w+")
# Only from the start of a word: tried inside a long word, the first \w+ would give back its
# characters one at a time at every position (quadratic in the word's length). A match
# never starts inside a word anyway: one starting there extends to the word's start.
_COMPOUND_RE = re.compile(r"(?<!\w)\w+(?:[-./:_]\w+)+")
_QUOTED_RE = re.compile(r'"([^"]+)"|“([^”]+)”|「([^」]+)」')
# "Caroline: ..." or "[user]: ..." at the start of a turn names the speaker; it is not evidence.
_SPEAKER_RE = re.compile(
    r"^\s*(?:\[[\w-]{1,32}\]|[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}|[\u4e00-\u9fff]{1,4}):\s*"
)

ENGLISH_STOPWORDS = frozenset(
    "a about above after again all also am an and any are as at be because been before being "
    "below between both but by can could did do does doing done down during each either else "
    "ever every few for from further get got had has have having he her here hers him his how i "
    "if in into is it its itself just let like me more most much must my no nor not now of off "
    "on once only or other our ours out over own please same she should so some such than that "
    "the their theirs them then there these they this those through to too under until up us "
    "very want was we were what when where which while who whom whose why will with would yes "
    "yet you your yours tell told say said mention mentioned remind kind sort thing things".split()
)
# Common Chinese function words. Single characters are limited to particles and pronouns that
# rarely sit inside content words; longer entries come first so that "我们" wins over "我".
CHINESE_STOPWORDS = tuple(
    sorted(
        "的 了 吗 呢 吧 啊 呀 哦 嘛 我 你 您 他 她 它 是 在 和 与 把 被 给 请 很 也 "
        "这个 那个 这些 那些 这样 那样 这里 那里 什么 怎么 怎样 如何 为什么 哪个 哪些 哪里 哪天 "
        "我们 你们 他们 她们 它们 自己 没有 有没有 是不是 非常 一下 一个 一些 可以 应该 什么时候 "
        "如果 因为 所以 但是 然后 还是 或者 关于 通过 以及 并且 另外 已经 请问 是否 提到 说过".split(),
        key=len,
        reverse=True,
    )
)
_CHINESE_STOP_RE = re.compile("|".join(re.escape(w) for w in CHINESE_STOPWORDS))
_SUFFIXES = ("ings", "ing", "edly", "ed", "ies", "es", "s", "ly")
LATIN_WEIGHT, CJK_PAIR_WEIGHT, CJK_SINGLE_WEIGHT, DATE_WEIGHT = 1.0, 0.7, 0.4, 1.5
MAX_TERMS = 16
MAX_CLAUSES = 3
_CLAUSE_END_RE = re.compile(r"(?<=[?!？！。；;])\s*|(?<=\.)\s+")


@dataclass(frozen=True, slots=True)
class Term:
    """One query term: ``token`` as documents are tokenised, ``literal`` the text to look for."""

    token: str
    literal: str
    weight: float
    kind: str = "word"  # word | cjk | date


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: tuple[Term, ...]
    phrases: tuple[str, ...]  # quoted parts: exact substrings
    cjk_words: tuple[str, ...] = ()  # CJK runs cut at function words, before pairing

    @property
    def literals(self) -> list[str]:
        return [t.literal for t in self.terms if t.kind != "date"]

    @property
    def whole_literals(self) -> list[str]:
        """What every-word matching looks for: words, and CJK runs whole (``部署失败``, not its
        pairs), which also keeps them long enough for the trigram index."""
        words = [t.literal for t in self.terms if t.kind not in ("date", "cjk")]
        return list(dict.fromkeys([*words, *self.cjk_words, *self.phrases]))


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def stem(word: str) -> str:
    """A light English stem (``visited``/``visits``/``visiting`` → ``visit``); other scripts as is.
    ``breed``, ``need`` and ``family``, ``daily`` keep their endings: no past tense or adverb there."""
    if not word.isascii() or not word.isalpha() or word.endswith(("eed", "ily")):
        return word
    for suffix in _SUFFIXES:
        if (
            word.endswith(suffix)
            and len(word) - len(suffix) >= 3
            and not word.endswith(("ss", "us", "is"))
        ):
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            return (
                word[:-1]
                if len(word) > 3 and word[-1] == word[-2] and suffix in ("ing", "ed")
                else word
            )
    return word


def strip_speaker(text: str) -> str:
    """The text without a leading speaker or role label."""
    return _SPEAKER_RE.sub("", text, count=1)


def speaker_label(text: str) -> str:
    """The leading speaker or role label of a text ("Caroline: "), or ""."""
    found = _SPEAKER_RE.match(text)
    return found.group() if found else ""


def _cjk_pieces(run: str) -> list[str]:
    return [p for p in _CHINESE_STOP_RE.split(run) if p]


def _pairs(piece: str) -> list[str]:
    return [piece] if len(piece) <= 2 else [piece[i : i + 2] for i in range(len(piece) - 1)]


def document_tokens(text: str) -> list[str]:
    """Tokens of a stored text for BM25: stemmed words, and CJK character pairs (single
    characters for one-character runs)."""
    tokens: list[str] = []
    for word in _WORD_RE.findall(normalise(text)):
        position = 0
        for run in _CJK_RUN_RE.finditer(word):
            if run.start() > position:
                tokens.append(stem(word[position : run.start()]))
            tokens.extend(_pairs(run.group()))
            position = run.end()
        if position < len(word):
            tokens.append(stem(word[position:]))
    return tokens


def _word_terms(word: str) -> list[Term]:
    terms: list[Term] = []
    position = 0
    for run in _CJK_RUN_RE.finditer(word):
        terms += _latin_terms(word[position : run.start()])
        for piece in _cjk_pieces(run.group()):
            if len(piece) == 1:
                terms.append(Term(piece, piece, CJK_SINGLE_WEIGHT, "cjk"))
            else:
                weight = LATIN_WEIGHT if len(piece) == 2 else CJK_PAIR_WEIGHT
                terms += [Term(p, p, weight, "cjk") for p in _pairs(piece)]
        position = run.end()
    return terms + _latin_terms(word[position:])


def _latin_terms(word: str) -> list[Term]:
    if not word or word in ENGLISH_STOPWORDS or (len(word) < 2 and not word.isdigit()):
        return []
    stemmed = stem(word)
    return [Term(stemmed, stemmed, LATIN_WEIGHT)]


def parse_query(query: str, max_terms: int = MAX_TERMS, today: date | None = None) -> Query:
    """The weighted terms of a query, at most ``max_terms``, in order of appearance. With ``today``,
    relative days in the query are days too ("what did we decide yesterday?")."""
    phrases = tuple(
        normalise(next(g for g in m.groups() if g)).strip() for m in _QUOTED_RE.finditer(query)
    )
    text = normalise(without_dates(query))
    days = [*absolute_dates(query, today), *(relative_dates(query, today) if today else [])]
    terms = [Term(d, d, DATE_WEIGHT, "date") for d in dict.fromkeys(days)]
    for compound in _COMPOUND_RE.findall(text):
        if compound.isascii():  # "db-prod-7" also as one literal term
            terms.append(Term(compound, compound, LATIN_WEIGHT, "compound"))
    cjk_words: list[str] = []
    for word in _WORD_RE.findall(text):
        terms += _word_terms(word)
        cjk_words += [p for run in _CJK_RUN_RE.findall(word) for p in _cjk_pieces(run)]
    unique: dict[str, Term] = {}
    for term in terms:
        unique.setdefault(term.token, term)
    kept = tuple(list(unique.values())[: max(0, max_terms)])
    return Query(
        query,
        kept,
        tuple(p for p in phrases if p),
        tuple(dict.fromkeys(cjk_words))[: max(0, max_terms)],
    )


def clauses(query: str) -> list[str]:
    """The sentences of a query that each ask for something (hold a search term): "What breed did
    she adopt? And where did she hike?" is two questions, ranked one by one so that the better
    matched cannot crowd the other out of the first results. A query of one sentence, or of more
    than ``MAX_CLAUSES`` (a pasted paragraph rather than a list of questions), stays whole."""
    parts = [p.strip() for p in _CLAUSE_END_RE.split(query) if p.strip()]
    asking = [p for p in parts if parse_query(p).terms]
    return asking if 1 < len(asking) <= MAX_CLAUSES else [query]
