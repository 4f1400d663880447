"""Layering rules of architecture.md, checked on the import graph."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
DOMAINS = ("sessions", "assembly", "working_memory", "archives", "jobs", "memory")
PURE_MODULES = (
    "core/tokens.py", "core/canonical_json.py", "core/messages.py", "sessions/sanitize.py",
    "sessions/fingerprint.py", "sessions/window.py", "sessions/bypass.py", "sessions/split.py",
    "assembly/steps.py", "assembly/budget.py", "assembly/provider_validity.py", "assembly/injection.py",
    "working_memory/document.py", "working_memory/guards.py", "working_memory/reminders.py",
    "working_memory/tool_call.py", "working_memory/extractive.py", "working_memory/prompts.py",
    "archives/render.py", "archives/matching.py", "memory/task_gate.py", "memory/ranking.py",
    "memory/render.py", "memory/scoring.py", "memory/text.py", "core/redaction.py",
    "memory/dates.py", "working_memory/extractive_sections.py", "memory/skills.py",
    "core/dates.py", "core/date_terms.py", "core/query.py", "archives/ranking.py",
    "core/token_bucket.py", "sessions/stored_form.py",
)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def modules_under(folder: str) -> list[Path]:
    return sorted((APP / folder).rglob("*.py"))


def test_only_the_api_layer_and_main_import_fastapi():
    offenders = []
    for path in APP.rglob("*.py"):
        relative = path.relative_to(APP).as_posix()
        if relative.startswith("api/") or relative in ("main.py",):
            continue
        if any(name == "fastapi" or name.startswith(("fastapi.", "starlette")) for name in imports_of(path)):
            offenders.append(relative)
    assert offenders == []


def test_domains_and_lower_layers_never_import_the_api():
    offenders = [
        p.relative_to(APP).as_posix()
        for folder in (*DOMAINS, "db", "core", "providers")
        for p in modules_under(folder)
        if any(name.startswith("app.api") for name in imports_of(p))
    ]
    assert offenders == []


def test_lower_layers_never_import_domains():
    offenders = [
        p.relative_to(APP).as_posix()
        for folder in ("db", "core", "providers")
        for p in modules_under(folder)
        if any(name.startswith(tuple(f"app.{d}" for d in DOMAINS)) for name in imports_of(p))
    ]
    assert offenders == []


def test_pure_modules_do_no_io():
    forbidden = ("sqlalchemy", "app.db", "app.providers", "httpx", "fastapi", "socket", "subprocess")
    offenders = {
        module: sorted(n for n in imports_of(APP / module) if n.startswith(forbidden))
        for module in PURE_MODULES
    }
    assert {m: names for m, names in offenders.items() if names} == {}
