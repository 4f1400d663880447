"""The console and the commands reach data through the domain services only (api → domain → db)."""

from __future__ import annotations

from tests.unit.test_architecture import APP, imports_of

FORBIDDEN = ("sqlalchemy", "app.db")


def offenders(folder: str, allowed: tuple[str, ...] = ()) -> dict[str, list[str]]:
    found = {}
    for path in sorted((APP / folder).rglob("*.py")):
        names = sorted(n for n in imports_of(path) if (n.startswith(FORBIDDEN) or n.endswith("repository"))
                       and n not in allowed)
        if names:
            found[path.relative_to(APP).as_posix()] = names
    return found


def test_console_pages_use_domain_services_only() -> None:
    assert offenders("api/console") == {}


def test_commands_use_domain_services_only() -> None:
    # Commands open the database (engine, migrations, backup, units of work) but run no SQL themselves.
    allowed = ("app.db.engine", "app.db.migrate", "app.db.uow", "app.db.backup", "app.db.health", "app.db.models")
    assert offenders("commands", allowed) == {}
