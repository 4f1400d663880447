"""Every curl example of the README works, in order, against a real server process."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import httpx
import pytest

from tests.jobs.test_crash_recovery import ROOT, free_port, start_server


def readme_curls() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.S)
    commands: list[str] = []
    for block in blocks:
        buffer = ""
        for line in block.splitlines():
            # A command continues while its single quotes are unbalanced (JSON over several lines).
            buffer = f"{buffer}\n{line}" if buffer else line
            if buffer.count("'") % 2 == 0:
                if buffer.strip().startswith(("curl", "ID=$(curl")):
                    commands.append(buffer)
                buffer = ""
    return commands


def to_request(command: str, port: int, tmp: Path) -> tuple[str, str, str | None]:
    """Method, URL and body of a README curl line (``--data-binary @file`` read from ``tmp``)."""
    command = command.split(" > ", 1)[0]
    args = shlex.split(command.removeprefix("ID=$(").split(" | ", 1)[0])
    method, url, body = "GET", "", None
    i = 1
    while i < len(args):
        arg = args[i]
        if arg == "-X":
            method, i = args[i + 1], i + 2
        elif arg in ("-d", "--data-binary"):
            body, i = args[i + 1], i + 2
            if body.startswith("@"):
                body = (tmp / body[1:]).read_text()
            method = "POST" if method == "GET" else method
        elif arg == "-H":
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            url, i = arg, i + 1
    return method, "http://" + url.replace("localhost:8080", f"127.0.0.1:{port}"), body


@pytest.mark.slow
def test_readme_examples(tmp_path: Path) -> None:
    commands = readme_curls()
    assert len(commands) >= 15
    port = free_port()
    server = start_server(tmp_path / "readme.db", port)
    try:
        memory_id = ""
        for command in commands:
            method, url, body = to_request(command.replace("$ID", memory_id), port, tmp_path)
            headers = {"content-type": "application/json"}
            if "If-Match:" in command:
                headers["If-Match"] = command.split("If-Match:", 1)[1].split("'", 1)[0].strip()
            response = httpx.request(method, url, content=body, headers=headers, timeout=30)
            assert response.status_code == 200, (command, response.text)
            if command.startswith("ID=$("):
                memory_id = response.json()["memory"]["id"]
            if " > " in command:
                (tmp_path / command.rsplit(" > ", 1)[1].strip()).write_text(response.text)
            elif (
                "format=text" in url
                or '"format": "text"' in (body or "")
                or url.endswith(("/metrics", "/export"))
            ):
                assert response.text
            else:
                payload = response.json()
                assert payload.get("error") is None, command
                if url.endswith("/archives/search") and "ranked" not in (body or ""):
                    assert payload["count"] >= 1, (command, payload)
                if url.endswith("/commit-turn"):
                    assert payload["status"] == "committed" and payload["ingested"] == 2, payload
                elif "/commit" in url:
                    assert payload["archive"]["status"] == "completed"
                if url.endswith("/compact"):
                    assert payload["ok"] is True
    finally:
        server.terminate()
        server.wait(timeout=20)
