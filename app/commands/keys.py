"""``keys create|list|revoke|new``: API keys stored (hashed) in the database, and CE_API_KEYS entries.

A stored key (``keys create``) works on every replica sharing the database from the next request
on, and ``keys revoke`` refuses it from the next request on: no restart. ``keys new`` only prints an
entry for CE_API_KEYS, the bootstrap that takes effect when the service restarts with it.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import Any

from app.commands.runtime import (
    EXIT_OK,
    CommandError,
    open_database,
    print_json_line,
    print_listing,
)
from app.core.clock import isoformat
from app.keys.service import (
    SCOPES,
    TENANT_PATTERN,
    KeyView,
    create_key,
    list_keys,
    new_key,
    revoke_key,
)
from app.settings import Settings

COLUMNS = [
    ("keyId", "ID"),
    ("key", "KEY"),
    ("tenantId", "TENANT"),
    ("name", "NAME"),
    ("scopes", "SCOPES"),
    ("createdAt", "CREATED"),
    ("revokedAt", "REVOKED"),
]
ENV = "CE_API_KEYS"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "keys",
        help="create, list or revoke API keys",
        description="API keys stored hashed in the database, beside the CE_API_KEYS bootstrap.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="store a new key and print it once")
    _key_options(create)
    create.add_argument("--name", help="a label for operators (who or what uses the key)")
    create.add_argument("--json", action="store_true", help="print the new key as a JSON object")
    create.set_defaults(run=run_create)
    listing = actions.add_parser(
        "list", help="stored keys and CE_API_KEYS entries (prefixes and fingerprints, never keys)"
    )
    listing.add_argument(
        "--json", action="store_true", help="one JSON object per line instead of a table"
    )
    listing.set_defaults(run=run_list)
    revoke = actions.add_parser("revoke", help="refuse a stored key from the next request on")
    revoke.add_argument("key", help="the key's ID or its prefix (KEY in `keys list`)")
    revoke.set_defaults(run=run_revoke)
    new = actions.add_parser("new", help="print a new random key and its CE_API_KEYS entry")
    _key_options(new)
    new.set_defaults(run=run_new)


def _key_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", required=True, help="the tenant the key belongs to")
    parser.add_argument(
        "--scope",
        action="append",
        choices=SCOPES,
        default=[],
        help="an extra permission (repeatable)",
    )


def run_create(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        created = create_key(uow, args.tenant, args.scope, args.name)
    if args.json:
        print_json_line({**_stored_record(created.view), "key": created.key})
    else:
        sys.stdout.write(f"{created.key}\n")
    sys.stderr.write(
        f"Stored key {created.view.key_id} ({created.view.prefix}…) of tenant "
        f"{created.view.tenant_id}: it works now, on every replica. "
        "The key is shown once; keep it secret.\n"
    )
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:
    settings = Settings()
    with open_database(settings) as uow:
        stored = [_stored_record(view) for view in list_keys(uow)]
    scopes = settings.api_key_scopes
    entries = [
        {
            "source": ENV,
            "key": "sha256:" + hashlib.sha256(key.encode()).hexdigest()[:12],
            "tenantId": tenant,
            "scopes": "+".join(sorted(scopes.get(key, ()))),
        }
        for key, tenant in settings.api_key_tenants.items()
    ]
    records = stored + entries
    if not args.json:
        records = [_table_row(r) for r in records]
    print_listing(
        records,
        COLUMNS,
        as_json=args.json,
        empty="no API keys: the service accepts loopback callers as tenant default",
    )
    return EXIT_OK


def run_revoke(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        view, changed = revoke_key(uow, args.key)
    state = "revoked" if changed else "was already revoked"
    sys.stdout.write(f"key {view.key_id} ({view.prefix}…) of tenant {view.tenant_id} {state}\n")
    return EXIT_OK


def run_new(args: argparse.Namespace) -> int:
    if not TENANT_PATTERN.match(args.tenant):
        raise CommandError("a tenant is 1 to 128 letters, digits, '.', '_' or '-'")
    key = new_key()
    entry = f"{key}:{args.tenant}" + (f":{'+'.join(sorted(set(args.scope)))}" if args.scope else "")
    sys.stdout.write(f"{entry}\n")
    sys.stderr.write(
        "Add this entry to CE_API_KEYS (comma-separated) and restart the service. "
        "The key is shown once; keep it secret. (`keys create` stores a key without a restart.)\n"
    )
    return EXIT_OK


def _stored_record(view: KeyView) -> dict[str, Any]:
    return {
        "source": "database",
        "keyId": view.key_id,
        "prefix": view.prefix,
        "tenantId": view.tenant_id,
        "name": view.name,
        "scopes": "+".join(view.scopes),
        "createdAt": isoformat(view.created_at),
        "revokedAt": isoformat(view.revoked_at),
    }


def _table_row(record: dict[str, Any]) -> dict[str, Any]:
    """A listing record as a table row: a stored key by its prefix, an entry by its fingerprint."""
    stored = record["source"] != ENV
    return {
        **record,
        "keyId": record["keyId"] if stored else "env",
        "key": record["prefix"] + "…" if stored else record["key"],
        "name": record.get("name") or ("-" if stored else ENV),
        "scopes": record["scopes"] or "-",
        "createdAt": record.get("createdAt") or "-",
        "revokedAt": record.get("revokedAt") or "-",
    }
