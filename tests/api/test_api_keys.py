"""API keys stored in the database (docs/api.md, Identity): they authenticate as their tenant with
their scopes, beside CE_API_KEYS; a revoked key is refused on the very next request."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.keys.service import READ_SENSITIVE_SCOPE, create_key, revoke_key
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.tenants import assert_hidden, assert_visible, seed_tenant


@pytest.fixture
def uow(settings: Settings) -> Iterator[UnitOfWork]:
    """The test's database, opened beside the app as the `keys` command opens it."""
    engine = create_db_engine(settings)
    yield UnitOfWork(engine)
    engine.dispose()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_unauthenticated(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == "UNAUTHENTICATED"
    assert body["error"]["message"] and isinstance(body["error"]["details"], dict)


async def test_a_stored_key_authenticates_as_its_tenant(
    uow: UnitOfWork, settings: Settings
) -> None:
    acme = create_key(uow, "acme", name="ci").key
    async with app_client(settings) as client:
        data = await seed_tenant(client, bearer(acme), "acmeword")
        await assert_visible(client, bearer(acme), data)
        # The data is acme's, not the keyless default tenant's.
        other = create_key(uow, "default").key
        await assert_hidden(client, bearer(other), data)


async def test_a_wrong_or_missing_key_is_refused_once_a_stored_key_exists(
    uow: UnitOfWork, settings: Settings
) -> None:
    async with app_client(settings) as client:
        assert (await client.get("/memories")).status_code == 200  # keyless loopback default
        key = create_key(uow, "acme").key
        for headers in ({}, bearer("ce_not-a-key"), bearer(key + "x"), {"Authorization": key}):
            assert_unauthenticated(await client.get("/memories", headers=headers))
            assert_unauthenticated(await client.post("/memories/search", json={"query": "x"}))
        assert (await client.get("/memories", headers=bearer(key))).status_code == 200


async def test_a_revoked_key_is_refused_on_the_very_next_request(
    uow: UnitOfWork, settings: Settings
) -> None:
    keep = create_key(uow, "acme").key
    made = create_key(uow, "acme")
    async with app_client(settings) as client:
        assert (await client.get("/memories", headers=bearer(made.key))).status_code == 200
        view, changed = revoke_key(uow, made.view.prefix)
        assert changed and view.key_id == made.view.key_id and view.revoked_at is not None
        assert_unauthenticated(await client.get("/memories", headers=bearer(made.key)))
        assert (await client.get("/memories", headers=bearer(keep))).status_code == 200
        # Revoking it again changes nothing; the other key is untouched.
        assert revoke_key(uow, str(made.view.key_id))[1] is False
        assert_unauthenticated(await client.get("/memories", headers=bearer(made.key)))


async def test_revoking_the_last_stored_key_returns_to_the_keyless_default(
    uow: UnitOfWork, settings: Settings
) -> None:
    """With no valid key left, the loopback default holds again: the caller is tenant default,
    whatever key it presents; the revoked key's tenant stays out of reach."""
    made = create_key(uow, "acme")
    async with app_client(settings) as client:
        assert_unauthenticated(await client.get("/memories"))
        await client.post(
            "/memories",
            headers=bearer(made.key),
            json={"content": "acmeword fact", "category": "entities"},
        )
        revoke_key(uow, made.view.prefix)
        for headers in ({}, bearer(made.key)):
            listing = await client.get("/memories", headers=headers)
            assert listing.status_code == 200 and listing.json()["items"] == []


async def test_the_read_sensitive_scope_of_a_stored_key(
    uow: UnitOfWork, settings: Settings
) -> None:
    plain = bearer(create_key(uow, "acme").key)
    sensitive = bearer(create_key(uow, "acme", [READ_SENSITIVE_SCOPE]).key)
    content = "The door code is 4711"
    async with app_client(settings) as client:
        made = await client.post(
            "/memories",
            headers=plain,
            json={"content": content, "category": "entities", "sensitivity": "masked"},
        )
        memory_id = made.json()["memory"]["id"]
        seen_plain = (await client.get(f"/memories/{memory_id}", headers=plain)).json()
        seen_sensitive = (await client.get(f"/memories/{memory_id}", headers=sensitive)).json()
    assert seen_plain["content"] != content and content not in str(seen_plain)
    assert seen_sensitive["content"] == content


async def test_ce_api_keys_work_beside_stored_keys(
    make_settings: Callable[..., Settings], uow: UnitOfWork
) -> None:
    stored = bearer(create_key(uow, "acme").key)
    env = bearer("env-key")
    settings = make_settings(api_keys=["env-key:globex:memories:read-sensitive"])
    async with app_client(settings) as client:
        acme = await seed_tenant(client, stored, "acmeword")
        globex = await seed_tenant(client, env, "globexword")
        await assert_visible(client, env, globex)
        await assert_hidden(client, env, acme)
        await assert_hidden(client, stored, globex)
        assert_unauthenticated(await client.get("/memories"))
        assert_unauthenticated(await client.get("/memories", headers=bearer("nope")))


async def test_two_stored_key_tenants_are_isolated(uow: UnitOfWork, settings: Settings) -> None:
    a = bearer(create_key(uow, "tenant-a").key)
    b = bearer(create_key(uow, "tenant-b").key)
    async with app_client(settings) as client:
        a_data = await seed_tenant(client, a, "alphaword")
        b_data = await seed_tenant(client, b, "bravoword")
        await assert_visible(client, a, a_data)
        await assert_visible(client, b, b_data)
        await assert_hidden(client, b, a_data)
        await assert_hidden(client, a, b_data)


async def test_the_console_signs_in_with_a_stored_key_and_out_when_it_is_revoked(
    uow: UnitOfWork, settings: Settings
) -> None:
    made = create_key(uow, "acme")
    create_key(uow, "globex")  # keys stay required once acme's is revoked
    async with app_client(settings) as client:
        assert (await client.get("/console/sessions")).status_code == 303
        wrong = await client.post("/console/login", data={"api_key": "ce_wrong"})
        assert wrong.status_code == 401
        signed_in = await client.post(
            "/console/login", data={"api_key": made.key, "next": "/console/sessions"}
        )
        assert signed_in.status_code == 303
        assert made.key not in signed_in.headers["set-cookie"]
        page = await client.get("/console/sessions")
        assert page.status_code == 200 and "Tenant <strong>acme</strong>" in page.text
        revoke_key(uow, str(made.view.key_id))
        assert (await client.get("/console/sessions")).status_code == 303  # to the sign-in form


def test_a_public_address_still_needs_ce_api_keys_with_stored_keys(
    make_settings: Callable[..., Settings], uow: UnitOfWork
) -> None:
    """Revoking the last stored key would open a public listener to everyone as tenant default:
    a non-loopback address needs the CE_API_KEYS bootstrap, stored keys or not."""
    create_key(uow, "acme")
    with pytest.raises(ValueError, match="CE_API_KEYS"):
        make_settings(host="0.0.0.0").check_safe_to_serve()
    make_settings(host="0.0.0.0", api_keys=["boot:ops"]).check_safe_to_serve()
