"""The memory word index's phrases of a query (``app.search.text.memory_phrases``): the index's own
words of each, CJK spaced, prefixes for English stems."""

from __future__ import annotations

import itertools
import random
import re
import sqlite3
from contextlib import closing

import pytest

from app.search.text.memory_phrases import MAX_PHRASES, cjk_spaced, memory_phrases
from app.search.text.query import CJK_CHARS, parse_query


def phrases(query: str) -> list[str]:
    """Each phrase as its words, ``*`` after a prefix."""
    return [
        " ".join(p.tokens) + ("*" if p.prefix else "") for p in memory_phrases(parse_query(query))
    ]


def test_english_stopwords_and_punctuation_are_dropped_and_stems_match_as_prefixes() -> None:
    assert phrases("What does the user prefer to drink?") == ["user*", "prefer*", "drink*"]
    assert phrases("Which museums did she visit?") == ["museum*", "visit*"]


def test_chinese_runs_become_character_pairs_and_whole_words() -> None:
    assert phrases("部署失败了吗？") == ["部 署", "署 失", "失 败", "部 署 失 败"]
    assert phrases("绿茶") == ["绿 茶"]


def test_mixed_latin_and_chinese() -> None:
    assert phrases("OpenClaw插件的afterTurn配置") == [
        "openclaw*",
        "插 件",
        "afterturn*",
        "配 置",
    ]


def test_duplicates_are_removed_case_insensitively() -> None:
    assert phrases("Deploy deploy DEPLOY 部署 部署") == ["deploy*", "部 署"]


def test_phrases_are_bounded() -> None:
    words = " ".join(f"word{i}" for i in range(40))
    assert len(memory_phrases(parse_query(words, max_terms=40))) == MAX_PHRASES
    assert len(memory_phrases(parse_query(words), max_phrases=3)) == 3
    assert memory_phrases(parse_query(words), max_phrases=0) == []


def test_identifiers_dates_and_quotes_are_phrases() -> None:
    assert phrases('x after_turn v2 on db-prod-7, "green tea"') == [
        "after turn",
        "db prod 7",
        "v2",
        "db",
        "prod*",
        "7",
        "green*",
        "tea*",
        "green tea",
    ]
    assert phrases("what happened on 7 May 2023?") == ["2023 05 07", "happen*"]
    assert [p.tokens for p in memory_phrases(parse_query("2023-05-07"))] == [("2023", "05", "07")]


def test_only_stopwords_give_no_phrases() -> None:
    assert phrases("what is the") == []
    assert phrases("是什么") == []


# cjk_spaced, and the phrases found by FTS5 itself in spaced text.


def test_cjk_spaced() -> None:
    assert cjk_spaced("用户喜欢喝绿茶") == "用 户 喜 欢 喝 绿 茶"
    assert cjk_spaced("OpenClaw插件ok") == "OpenClaw 插 件 ok"
    assert cjk_spaced("已有 空格") == "已 有 空 格"
    assert cjk_spaced("plain ascii, unchanged") == "plain ascii, unchanged"
    assert cjk_spaced("カタカナ와한글") == "カ タ カ ナ 와 한 글"


def test_quotes_inside_a_quoted_part_are_words_apart() -> None:
    assert phrases('“say "hi"”') == ["hi", "say hi"]
    assert phrases("绿茶 green after_turn") == ["after turn", "绿 茶", "green*"]


def _fts_available() -> bool:
    try:
        with closing(sqlite3.connect(":memory:")) as db:
            db.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    return True


@pytest.mark.skipif(not _fts_available(), reason="this SQLite build has no FTS5")
def test_fts5_unicode61_matches_chinese_after_spacing(request: pytest.FixtureRequest) -> None:
    db = sqlite3.connect(":memory:")
    request.addfinalizer(db.close)
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')")
    rows = ["用户喜欢喝绿茶", "项目使用 PostgreSQL 数据库", 'He said "hi" to the team']
    db.executemany("INSERT INTO t(body) VALUES (?)", [(cjk_spaced(r),) for r in rows])

    def search(query: str) -> list[int]:
        expression = " OR ".join(
            '"' + " ".join(p.tokens) + '"' + ("*" if p.prefix else "")
            for p in memory_phrases(parse_query(query))
        )
        return [
            r[0]
            for r in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", (expression,))
        ]

    assert search("绿茶") == [1]
    assert search("用户喜欢喝什么茶") == [1]
    assert search("postgresql 数据库") == [2]
    assert search('"hi" team') == [3]
    assert search("红茶") == []


def test_cjk_spaced_matches_the_gap_rule_on_random_texts() -> None:
    # A space between a CJK character and any adjacent non-space character, and nothing else.
    rng = random.Random(7)
    alphabet = "ab Z1_-\n\t。，　中文한글カナ\U00020000"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
        expected = text[:1]
        for before, after in itertools.pairwise(text):
            cjk = [bool(re.match(f"[{CJK_CHARS}]", c)) for c in (before, after)]
            gap = (cjk[0] and not after.isspace()) or (cjk[1] and not before.isspace())
            expected += (" " if gap else "") + after
        assert cjk_spaced(text) == expected, text
