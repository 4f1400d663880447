"""Property tests of the redaction boundary: idempotent on any text, and no generated secret of a
known shape survives, wherever it sits in ordinary text (docs/quality.md, Security)."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.rules.redaction import redact_message, redact_secrets

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
TOKEN = ALNUM + "_-"
BASE64 = ALNUM + "+/"
# Ordinary text around secrets: words, digits, punctuation, whitespace, a little Chinese.
FILLER = st.text(alphabet=ALNUM + " \n\t.,:;=-_/()[]{}'\"@#?&*<>!密码是用户", max_size=60)
SEPARATORS = st.sampled_from([" ", "\n", " (", ") ", ", ", "\t", " | "])
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _with_digit(body: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return body.filter(lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))


def _secret_value(extra: str = "!#%^*+") -> st.SearchStrategy[str]:
    """A password-like value: long, mixed, no delimiter that would end it early (and no "$":
    ``password=$DB_PASSWORD`` names a variable, it is not a secret)."""
    return _with_digit(st.text(alphabet=ALNUM + extra, min_size=12, max_size=30))


@st.composite
def private_key(draw: st.DrawFn) -> tuple[str, list[str]]:
    kind = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]))
    lines = draw(
        st.lists(st.text(alphabet=BASE64, min_size=40, max_size=64), min_size=1, max_size=4)
    )
    closed = draw(st.booleans())
    block = f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines) + "\n"
    if closed:
        block += f"-----END {kind}PRIVATE KEY-----"
    return block, lines


# Each strategy gives (text to embed, the parts of it that must not survive).
SECRETS = st.one_of(
    st.text(alphabet=UPPER_DIGITS, min_size=16, max_size=16).map(
        lambda b: ("AKIA" + b, ["AKIA" + b])
    ),
    st.text(alphabet=ALNUM, min_size=36, max_size=40).map(lambda b: ("ghp_" + b, [b])),
    st.text(alphabet=ALNUM + "_", min_size=22, max_size=40).map(lambda b: ("github_pat_" + b, [b])),
    _with_digit(st.text(alphabet=TOKEN, min_size=20, max_size=40)).map(lambda b: ("sk-" + b, [b])),
    st.text(alphabet=ALNUM + "-", min_size=10, max_size=30)
    .filter(lambda b: len(b.strip("-")) > 8)
    .map(lambda b: ("xoxb-" + b, ["xoxb-" + b])),
    st.text(alphabet=TOKEN, min_size=35, max_size=35).map(lambda b: ("AIza" + b, [b])),
    st.tuples(*(st.text(alphabet=TOKEN, min_size=8, max_size=30) for _ in range(3))).map(
        lambda p: ("eyJ" + ".".join(p), [".".join(p)])
    ),
    _with_digit(st.text(alphabet=ALNUM + "._~+/-", min_size=16, max_size=40)).map(
        lambda t: (f"Authorization: Bearer {t}", [t])
    ),
    st.tuples(
        st.sampled_from(
            ["password", "db_password", "API_KEY", "client_secret", "auth_token", "SECRET_KEY"]
        ),
        st.sampled_from(["=", ": ", " = ", '": "', "='"]),
        _secret_value(),
    ).map(lambda p: (f"{p[0]}{p[1]}{p[2]}", [p[2]])),
    # A URL's password cannot hold "#", "?", "/" or "@" unencoded.
    st.tuples(
        st.sampled_from(["postgres", "https", "redis", "mysql+pymysql"]), _secret_value("!%^*+")
    ).map(lambda p: (f"{p[0]}://user:{p[1]}@db.internal:5432/app", [p[1]])),
    private_key(),
)


@PROPERTY_SETTINGS
@given(st.text(max_size=300))
def test_redaction_is_idempotent_on_any_text(text: str) -> None:
    once, _ = redact_secrets(text)
    assert redact_secrets(once) == (once, 0)


@PROPERTY_SETTINGS
@given(st.lists(st.tuples(FILLER, SEPARATORS, SECRETS, SEPARATORS), min_size=1, max_size=4), FILLER)
def test_no_known_secret_shape_survives(
    parts: list[tuple[str, str, tuple[str, list[str]], str]], tail: str
) -> None:
    text = (
        "".join(f"{before}{left}{secret}{right}" for before, left, (secret, _), right in parts)
        + tail
    )
    hidden = [h for _, _, (_, secrets), _ in parts for h in secrets]
    ordinary = "".join(before + left + right for before, left, _, right in parts) + tail
    assume(not any(h in ordinary for h in hidden))  # the filler happened to spell a secret
    redacted, count = redact_secrets(text)
    assert count >= 1
    for value in hidden:
        assert value not in redacted, (value, redacted)
    assert redact_secrets(redacted) == (redacted, 0)


@PROPERTY_SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | FILLER | SECRETS.map(lambda s: s[0]),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(FILLER, inner, max_size=3),
        max_leaves=12,
    )
)
def test_structured_values_are_redacted_throughout(value: object) -> None:
    once = redact_message(value)
    assert redact_message(once) == once
    assert "AKIA" not in repr(once) or "[REDACTED:" in repr(once) or _no_aws_shape(once)


def _no_aws_shape(value: object) -> bool:
    from app.core.rules.secret_patterns import AWS_ACCESS_KEY_RE

    return AWS_ACCESS_KEY_RE.search(repr(value)) is None
