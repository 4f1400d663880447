"""``keys new|list``: make an API key entry for CE_API_KEYS; list the configured ones safely.

Keys live in the service's environment (CE_API_KEYS), not in the database: a new key takes
effect when the service restarts with the entry added.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import secrets
import sys

from app.api.deps import READ_SENSITIVE_SCOPE
from app.commands.runtime import EXIT_OK, CommandError, print_table
from app.settings import Settings

TENANT_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
SCOPES = (READ_SENSITIVE_SCOPE,)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("keys", help="make a new API key entry, or list the configured keys")
    actions = parser.add_subparsers(dest="action", required=True)
    new = actions.add_parser("new", help="print a new random key and its CE_API_KEYS entry")
    new.add_argument("--tenant", required=True, help="the tenant the key belongs to")
    new.add_argument(
        "--scope",
        action="append",
        choices=SCOPES,
        default=[],
        help="an extra permission (repeatable)",
    )
    new.set_defaults(run=run_new)
    listing = actions.add_parser(
        "list", help="tenants, scopes and fingerprints of CE_API_KEYS (never the keys)"
    )
    listing.set_defaults(run=run_list)


def run_new(args: argparse.Namespace) -> int:
    if not TENANT_PATTERN.match(args.tenant):
        raise CommandError("a tenant is 1 to 128 letters, digits, '.', '_' or '-'")
    key = "ce_" + secrets.token_urlsafe(32)
    entry = f"{key}:{args.tenant}" + (f":{'+'.join(sorted(set(args.scope)))}" if args.scope else "")
    sys.stdout.write(f"{entry}\n")
    sys.stderr.write(
        "Add this entry to CE_API_KEYS (comma-separated) and restart the service. "
        "The key is shown once; keep it secret.\n"
    )
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:  # noqa: ARG001 (every command takes its parsed arguments)
    settings = Settings()
    if not settings.api_keys:
        sys.stdout.write(
            "no API keys configured: the service accepts loopback callers as tenant default\n"
        )
        return EXIT_OK
    scopes = settings.api_key_scopes
    rows = [
        {
            "tenant": tenant,
            "scopes": "+".join(sorted(scopes.get(key, ()))) or "-",
            "fingerprint": hashlib.sha256(key.encode()).hexdigest()[:12],
        }
        for key, tenant in settings.api_key_tenants.items()
    ]
    print_table(rows, [("tenant", "TENANT"), ("scopes", "SCOPES"), ("fingerprint", "KEY SHA-256")])
    return EXIT_OK
