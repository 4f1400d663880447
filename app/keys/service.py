"""Stored API keys: create, list and revoke them; resolve the key a request presents.

The database holds the SHA-256 of each key, never the key. A fast hash is enough: the service makes
every key from 32 random bytes, so there is no guessable key to try, which is the attack a slow
password hash (bcrypt, scrypt, argon2) slows down, and a slow hash would be paid by every request,
since every request is authenticated. Whoever reads the table learns hashes that cannot be turned
back into keys. A lookup by hash through a unique index also compares no secret byte by byte.

Keys are looked up on every request, with no cache: a revoked key is refused from the next request
on, by every replica that shares the database. ``CE_API_KEYS`` entries stay a bootstrap beside
these (app/api/deps.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.core.clock import utcnow
from app.db.models import ApiKey
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument, NotFound
from app.keys import repository as repo

READ_SENSITIVE_SCOPE = "memories:read-sensitive"
METRICS_ALL_SCOPE = (
    "metrics:all-tenants"  # /metrics shows every tenant's series, not the key's only
)
SCOPES = (READ_SENSITIVE_SCOPE, METRICS_ALL_SCOPE)
TENANT_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
KEY_MARK = "ce_"
PREFIX_CHARS = 12  # "ce_" and 9 random characters: tells keys apart, useless to an attacker
NAME_MAX = 128


@dataclass(frozen=True, slots=True)
class KeyView:
    """A stored key as an operator sees it: never the key or its hash."""

    key_id: int
    tenant_id: str
    name: str | None
    prefix: str
    scopes: tuple[str, ...]
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class CreatedKey:
    key: str  # shown to the operator once, stored nowhere
    view: KeyView


@dataclass(frozen=True, slots=True)
class KeyIdentity:
    """Who a valid stored key speaks for."""

    key_id: int
    tenant_id: str
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class Resolution:
    """What the database says of a presented key: whose it is (None: no valid key of it), and
    whether any unrevoked key exists (then a request without a valid key is refused)."""

    identity: KeyIdentity | None
    keys_exist: bool


def new_key() -> str:
    """A fresh key: 32 random bytes, URL-safe, marked so that secret scanners recognise it."""
    return KEY_MARK + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def check_tenant(tenant_id: str) -> None:
    if not TENANT_PATTERN.match(tenant_id):
        raise InvalidArgument("a tenant is 1 to 128 letters, digits, '.', '_' or '-'")


def create_key(
    uow: UnitOfWork, tenant_id: str, scopes: Iterable[str] = (), name: str | None = None
) -> CreatedKey:
    """Store a new key of ``tenant_id``; the key itself is in the answer only."""
    check_tenant(tenant_id)
    wanted = sorted(set(scopes))
    unknown = [s for s in wanted if s not in SCOPES]
    if unknown:
        raise InvalidArgument(f"unknown scope {unknown[0]!r}; known: {', '.join(SCOPES)}")
    if name is not None and not 0 < len(name) <= NAME_MAX:
        raise InvalidArgument(f"a key's name is 1 to {NAME_MAX} characters")
    key = new_key()
    with uow.write() as db:
        row = repo.insert_key(
            db,
            tenant_id=tenant_id,
            name=name,
            prefix=key[:PREFIX_CHARS],
            key_hash=hash_key(key),
            scopes="+".join(wanted),
            now=utcnow(),
        )
        view = _view(row)
    return CreatedKey(key, view)


def list_keys(uow: UnitOfWork) -> list[KeyView]:
    with uow.read() as db:
        return [_view(row) for row in repo.list_keys(db)]


def revoke_key(uow: UnitOfWork, reference: str) -> tuple[KeyView, bool]:
    """Revoke the key with this id or display prefix; the key, and False when it already was."""
    reference = reference.strip()
    key_id = int(reference) if reference.isdigit() else None
    if key_id is None and len(reference) < len(KEY_MARK) + 1:
        raise InvalidArgument("give a key's id or the first characters of its prefix")
    with uow.write() as db:
        found = repo.keys_by_id_or_prefix(db, key_id, reference)
        if not found:
            raise NotFound("API key", reference)
        if len(found) > 1:
            raise InvalidArgument(
                f"{len(found)} keys start with {reference!r}: give more characters or the id"
            )
        changed = repo.revoke(db, found[0].id, utcnow())
        db.refresh(found[0])
        return _view(found[0]), changed


def resolve_key(uow: UnitOfWork, key: str) -> Resolution:
    """The stored key ``key`` is, if it is one and unrevoked (one read, no write transaction)."""
    key_id, tenant_id, scopes, keys_exist = repo.lookup(uow.driver_row, hash_key(key))
    if key_id is None or tenant_id is None:
        return Resolution(None, keys_exist)
    return Resolution(KeyIdentity(key_id, tenant_id, _scopes(scopes or "")), keys_exist)


def stored_keys_exist(uow: UnitOfWork) -> bool:
    """Whether any stored key is unrevoked (then every caller needs a key)."""
    return resolve_key(uow, "").keys_exist  # no key hashes to the hash of ""


def key_identity(uow: UnitOfWork, key_id: int) -> KeyIdentity | None:
    """Whose the unrevoked key with this id is; None once it is revoked or gone."""
    with uow.read() as db:
        row = repo.active_key(db, key_id)
        return None if row is None else KeyIdentity(row.id, row.tenant_id, _scopes(row.scopes))


def _scopes(text: str) -> frozenset[str]:
    return frozenset(s for s in text.split("+") if s)


def _view(row: ApiKey) -> KeyView:
    return KeyView(
        key_id=row.id,
        tenant_id=row.tenant_id,
        name=row.name,
        prefix=row.prefix,
        scopes=tuple(sorted(_scopes(row.scopes))),
        created_at=row.created_at,
        revoked_at=row.revoked_at,
    )
