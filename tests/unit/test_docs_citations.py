"""The project's documents stand alone: every document a comment cites is in the repository, every
``§`` anchor it names exists, and no file names a path of one particular machine.

Pure: reads files of the repository, nothing else. Citations are looked for where people write
them: comments and docstrings of Python modules, ``//`` comments of the plugin's TypeScript, and
whole Markdown files. String literals are data (memory URIs, sample file names) and are not read.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# Where citations are looked for.
CITING_TREES = ("app", "bench", "migrations", "clients/openclaw/src", "tests", "docs")
CITING_FILES = (
    "README.md",
    "bench/README.md",
    "clients/openclaw/README.md",
    "Dockerfile",
    "docker-compose.yml",
)
SKIPPED_PARTS = frozenset({"static", "node_modules", "__pycache__"})

# Files of an agent's workspace that the service recognises by name; they are not repository files.
NOT_REPOSITORY_FILES = frozenset({"SKILL.md"})

# A Markdown file name, possibly with a relative path, that does not continue a longer token (a
# URI, ``skills/<name>/SKILL.md``): the whole path is resolved.
CITATION = re.compile(r"(?<![\w./<>{}:-])([A-Za-z0-9_][\w./-]*\.md)\b")
ANCHOR = re.compile(r"§(\d+(?:\.\d+)*)")
PEER_CITATION = re.compile(r"docs/peers\.md,\s+(OpenViking|OpenClaw)\s+((?:§[\d.]+[\s,/–-]*)+)")

# Paths of one machine. Built from pieces so that this file does not match itself.
MACHINE_PATH = re.compile("/" + "work" + "/|/" + "home" + r"/(?!demo\b|dev\b)[\w.-]+")
TEXT_SUFFIXES = frozenset(
    {
        ".py",
        ".ts",
        ".md",
        ".toml",
        ".ini",
        ".cfg",
        ".json",
        ".yml",
        ".yaml",
        ".txt",
        ".html",
        ".css",
        ".mako",
        ".sh",
    }
)
TEXT_NAMES = frozenset({"Dockerfile", "Makefile", ".gitignore", ".dockerignore"})
SCANNED_TOP = ("app", "bench", "migrations", "clients", "tests", "docs", "openapi", ".ci")
UNTRACKED_PARTS = frozenset(
    {
        ".git",
        ".venv",
        "node_modules",
        ".cache",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "data",
    }
)


def _python_prose(source: str) -> Iterator[tuple[int, str]]:
    """Comments and docstrings of a module, with their first line number."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    layout = {tokenize.NL, tokenize.COMMENT}
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
        elif tok.type == tokenize.STRING:
            before = next((t for t in reversed(tokens[:i]) if t.type not in layout), None)
            after = next((t for t in tokens[i + 1 :] if t.type not in layout), None)
            starts = before is None or before.type in {
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENCODING,
            }
            ends = after is None or after.type in {tokenize.NEWLINE, tokenize.ENDMARKER}
            if starts and ends:
                yield tok.start[0], tok.string


def _typescript_prose(source: str) -> Iterator[tuple[int, str]]:
    """``//`` comments of a TypeScript file."""
    for number, line in enumerate(source.splitlines(), 1):
        if "//" in line and not re.search(r"[\"'`][^\"'`]*//", line):
            yield number, line[line.index("//") :]


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """The text of a file in which citations are written, line-numbered."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        yield from _python_prose(source)
    elif path.suffix == ".ts":
        yield from _typescript_prose(source)
    else:
        yield from enumerate(source.splitlines(), 1)


def _citing_files() -> list[Path]:
    files = [ROOT / name for name in CITING_FILES if (ROOT / name).is_file()]
    for tree in CITING_TREES:
        for path in sorted((ROOT / tree).rglob("*")):
            if SKIPPED_PARTS & set(path.relative_to(ROOT).parts):
                continue
            if path.is_file() and path.suffix in {".py", ".ts", ".md"}:
                files.append(path)
    return files


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Every line of a prose block, numbered in the file."""
    for first, block in _prose(path):
        for offset, line in enumerate(block.splitlines()):
            yield first + offset, line


def _resolves(cited: str, citing: Path) -> bool:
    """The cited file is in the repository: beside the citing file, at the root, or under docs/."""
    if Path(cited).name in NOT_REPOSITORY_FILES:
        return True
    return any((base / cited).is_file() for base in (citing.parent, ROOT, DOCS))


def _peer_anchors() -> dict[str, set[str]]:
    """The ``§`` anchors of docs/peers.md's headings, by peer (``## OpenViking``, ``## OpenClaw``)."""
    anchors: dict[str, set[str]] = {}
    peer = ""
    fenced = False
    for line in (DOCS / "peers.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            peer = line[3:].split()[0]
        elif not fenced and line.startswith("### "):
            anchors.setdefault(peer, set()).update(ANCHOR.findall(line))
    return anchors


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_the_documents_exist() -> None:
    names = [
        "README",
        "architecture",
        "api",
        "lifecycle",
        "working-memory",
        "recall",
        "quality",
        "peers",
    ]
    missing = [f"docs/{name}.md" for name in names if not (DOCS / f"{name}.md").is_file()]
    assert not missing, f"missing documents: {missing}"


def test_every_cited_document_is_in_the_repository() -> None:
    dangling = [
        f"{_where(path, number)}: {cited}"
        for path in _citing_files()
        for number, line in _lines(path)
        for cited in CITATION.findall(line)
        if not _resolves(cited, path)
    ]
    assert not dangling, "citations of files that are not in the repository:\n" + "\n".join(
        dangling
    )


def test_every_section_mark_names_a_section_of_docs_peers() -> None:
    anchors = _peer_anchors()
    known = set().union(*anchors.values())
    wrong = []
    for path in _citing_files():
        for number, line in _lines(path):
            for peer, marks in PEER_CITATION.findall(line):
                wrong += [
                    f"{_where(path, number)}: {peer} §{mark}"
                    for mark in ANCHOR.findall(marks)
                    if mark not in anchors.get(peer, set())
                ]
            wrong += [
                f"{_where(path, number)}: §{mark}"
                for mark in ANCHOR.findall(line)
                if mark not in known
            ]
    assert not wrong, "section marks that docs/peers.md does not have:\n" + "\n".join(
        sorted(set(wrong))
    )


def _repository_text_files() -> Iterator[Path]:
    for path in sorted(ROOT.iterdir()):
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
            yield path
    for top in SCANNED_TOP:
        for path in sorted((ROOT / top).rglob("*")):
            if UNTRACKED_PARTS & set(path.relative_to(ROOT).parts):
                continue
            if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES):
                yield path


def test_no_file_names_a_path_of_one_machine() -> None:
    found = []
    for path in _repository_text_files():
        if path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [
            f"{_where(path, number)}: {match.group(0)}"
            for number, line in enumerate(text.splitlines(), 1)
            for match in MACHINE_PATH.finditer(line)
        ]
    assert not found, "paths of one machine (write a relative or example path):\n" + "\n".join(
        found
    )
