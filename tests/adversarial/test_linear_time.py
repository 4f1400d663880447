"""No input can stall the service: 1 MB of every adversarial shape goes through each text path of a
request (redaction, capture sanitation and preparation, memory fields, recall queries, archive
search matching) and the regex sizing, in a child process with a generous deadline.

The deadline guards against hangs only: a quadratic pattern needs hours for a megabyte (20 KB of
"a.a.a…" once took 39 s), a linear one well under a second. Speed itself is measured by
``python -m bench --only adversarial``, never asserted here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.adversarial_texts import SHAPES

ROOT = Path(__file__).resolve().parents[2]
MB = 1_000_000
HANG_GUARD_S = 120

# Each runs one text path over every shape; ``text`` is the shape, ``name`` its name.
PATHS = {
    "redaction": "redact_secrets(text)",
    "capture sanitation": "sanitize_text('```json ' + text, collapse_whitespace=False)",
    "recall query": "recall_query('<relevant-memories>' + text)",
    "capture preparation": (
        "stored_form({'role': 'toolResult', 'toolCallId': 't', 'content': [{'type': 'text', 'text': text}]}, 1000, False);"
        "stored_form({'role': 'user', 'content': text}, 1000, True)"
    ),
    "memory fields": "clean_new_memory(NewMemory(content=text[:100_000], category='events', title=text[:500]))",
    "token estimate": "estimate_text_tokens(text + '部署')",
    "keyword match and snippet": "snippet(text, find_keywords(text, ['zz', 'a'], False) or (0, 0))",
    "regex sizing": "expanded_size(text[:2000])",
}
PRELUDE = """
from app.archives.search.matching import expanded_size, find_keywords, snippet
from app.assembly.injection import recall_query
from app.core.rules.redaction import redact_secrets
from app.core.rules.tokens import estimate_text_tokens
from app.memory.store.fields import NewMemory, clean_new_memory
from app.core.rules.sanitize import sanitize_text
from app.sessions.stored_form import stored_form
from bench.adversarial_texts import SHAPES, adversarial_text
"""


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_megabyte_of_every_adversarial_shape_finishes(path: str) -> None:
    code = PRELUDE + textwrap.dedent(f"""
        for name in SHAPES:
            text = adversarial_text(name, {MB})
            {PATHS[path]}
            print(name, flush=True)
    """)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        finished = (
            (exc.stdout or b"").decode().split()
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or "").split()
        )
        stuck = next((name for name in SHAPES if name not in finished), "?")
        pytest.fail(f"{path} did not finish 1 MB of {stuck!r} within {HANG_GUARD_S} s")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == list(SHAPES)


def test_every_shape_is_a_megabyte() -> None:
    from bench.adversarial_texts import adversarial_text

    assert {name: len(adversarial_text(name, MB)) for name in SHAPES} == dict.fromkeys(SHAPES, MB)
