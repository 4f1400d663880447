"""Sizing user regexes before the engine compiles them (archive regex search)."""

from __future__ import annotations

import pytest

from app.archives.search.matching import MAX_EXPANDED_SIZE, compile_regex, expanded_size
from app.errors import InvalidArgument


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{1000}", 1000),
        ("x{2,5}y", 6),
        (r"\{5\}", 3),
        (r"\p{L}{5}", 5),
        (r"\x{41}{100}", 100),
        ("[a-z]{10}", 10),
        ("[[a]&&[b]]{3}", 3),
        ("(a)(b){3}", 4),
        ("a*b+c?", 6),
        ("(a{1000}){300}", 300_000),
        ("((a{1000}){1000}){1000}", 1_000_000_000),
    ],
)
def test_counted_repeats_multiply_what_they_repeat(pattern: str, size: int) -> None:
    assert expanded_size(pattern) == size


@pytest.mark.parametrize(
    "pattern", ["((a{1000}){1000}){1000}", "(a{1000}|b{1000}){300}", "a{100001}"]
)
def test_a_pattern_too_large_to_compile_is_refused_before_compiling(pattern: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        compile_regex(pattern, case_sensitive=False)
    assert refused.value.details["reason"] == "regex_too_large"


@pytest.mark.parametrize(
    "pattern", ["(" * 500 + "a" + ")" * 500, "[" * 1000, "(?:" * 600 + "a" + ")" * 600]
)
def test_a_pattern_too_deep_to_compile_is_refused(pattern: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        compile_regex(pattern, case_sensitive=True)
    assert refused.value.details["reason"] == "regex_too_deep"


def test_ordinary_patterns_compile() -> None:
    assert expanded_size(r"deploy\s+(failed|ok)\b.{0,80}") < MAX_EXPANDED_SIZE
    assert (
        compile_regex(r"deploy\s+(failed|ok)", case_sensitive=False).search("Deploy  failed")
        is not None
    )
