"""Processes for the OpenClaw host test: the service, the host's gateway and its CLI, all on loopback."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

import httpx

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "clients" / "openclaw"


def pack_plugin(node: Path, typescript: Path, destination: Path) -> Path:
    """The plugin's tarball as `make plugin-pack` builds it: the TypeScript compiled into `dist/`
    (a package install runs JavaScript), then `npm pack`."""
    subprocess.run(
        [
            str(node),
            str(typescript),
            "-p",
            "tsconfig.build.json",
            "--typeRoots",
            str(typescript.parents[2] / "@types"),
        ],
        cwd=PLUGIN_DIR,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    destination.mkdir(parents=True, exist_ok=True)
    packed = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(destination)],
        cwd=PLUGIN_DIR,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return destination / packed.stdout.strip().splitlines()[-1]


def plugin_install_flags(release: str) -> list[str]:
    """From 2026.8 a noninteractive install of a local archive must confirm its source and the
    plugin's declared capabilities; 2026.7 asks neither."""
    year, month = (int(part) for part in release.split(".")[:2])
    return ["--force", "--accept-capabilities"] if (year, month) >= (2026, 8) else []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate: Any, timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _stop(proc: subprocess.Popen[Any], timeout: float = 15) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


@dataclass
class Service:
    """`python -m app serve` on a free loopback port with its own database; stoppable and restartable."""

    workdir: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "service.log"

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CE_")}
        env.update(
            {
                "CE_HOST": "127.0.0.1",
                "CE_PORT": str(self.port),
                "CE_DATABASE_URL": f"sqlite:///{self.workdir / 'context-engine.db'}",
                "CE_WORKER__ENABLED": "true",
                "CE_WM__MODE": "extractive",
                "CE_LOG_LEVEL": "WARNING",
            }
        )
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve"],
            cwd=REPO,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_until(self._ready, 90, "the context-engine service")

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"the service exited ({self.proc.returncode}); see {self.log_path}")
        try:
            return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", timeout=30, **kw)

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{self.url}{path}", json=body, timeout=120)


class RecordingProxy:
    """A loopback reverse proxy in front of the service that records every request the plugin
    sends (method, path, JSON body, status, upstream time). Stopped together with the service,
    so the plugin sees the same refused connection as with no service at all."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._connections: set[socket.socket] = set()
        self._drop_next: set[str] = set()

    def drop_next_response(self, path: str) -> None:
        """Forward the next request to `path` but lose the service's answer (the connection is
        cut), as when a network or the plugin's process fails after the service acted."""
        with self._lock:
            self._drop_next.add(path)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with proxy._lock:
                    proxy._connections.add(self.connection)

            def finish(self) -> None:
                with proxy._lock:
                    proxy._connections.discard(self.connection)
                super().finish()

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                started = time.perf_counter()
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=300)
                try:
                    headers = {
                        k: v
                        for k, v in self.headers.items()
                        if k.lower() not in ("host", "connection")
                    }
                    conn.request(self.command, self.path, body=raw or None, headers=headers)
                    upstream = conn.getresponse()
                    data = upstream.read()
                    status, ctype = (
                        upstream.status,
                        upstream.getheader("content-type", "application/json"),
                    )
                except OSError as error:
                    status, ctype = 502, "application/json"
                    data = json.dumps(
                        {"error": {"code": "UNAVAILABLE", "message": str(error), "details": {}}}
                    ).encode()
                finally:
                    conn.close()
                ms = (time.perf_counter() - started) * 1000
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                try:
                    answer = (
                        json.loads(data)
                        if ctype.startswith("application/json")
                        else data.decode(errors="replace")
                    )
                except ValueError:
                    answer = None
                with proxy._lock:
                    dropped = self.path in proxy._drop_next
                    proxy._drop_next.discard(self.path)
                    proxy.records.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "body": body,
                            "raw": raw.decode(errors="replace"),
                            "status": status,
                            "ms": ms,
                            "headers": dict(self.headers.items()),
                            "answer": answer,
                            "answer_lost": dropped,
                        }
                    )
                if dropped:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _forward
            do_POST = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, name="service-proxy", daemon=True
        ).start()

    def stop(self) -> None:
        """Stop listening and drop the kept-alive connections, as a stopped service would."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            connections, self._connections = list(self._connections), set()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.records)


@dataclass
class CliResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def json(self) -> Any:
        """The JSON document the CLI printed (the last top-level object in stdout)."""
        text = self.stdout.strip()
        try:
            return json.loads(text)
        except ValueError:
            start = text.find("{")
            if start < 0:
                raise
            return json.loads(text[start:])


@dataclass
class Host:
    """An isolated OpenClaw installation: its own HOME, state dir, config, workspace and log file."""

    node: Path
    openclaw: Path
    root: Path
    model_url: str
    service_url: str
    gateway_port: int = field(default_factory=free_port)
    gateway_token: str = "host-test-token"
    gateway: subprocess.Popen[bytes] | None = None
    _gateway_log: IO[bytes] | None = None

    def __post_init__(self) -> None:
        for d in (self.home, self.state, self.workspace):
            d.mkdir(parents=True, exist_ok=True)
        self.write_config()

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def config_path(self) -> Path:
        return self.root / "openclaw.json"

    @property
    def log_file(self) -> Path:
        return self.root / "openclaw.log"

    @property
    def gateway_log_path(self) -> Path:
        return self.root / "gateway.out"

    def write_config(self) -> None:
        config = {
            "models": {
                "providers": {
                    "stub": {
                        "baseUrl": self.model_url,
                        "apiKey": "stub-provider-secret",
                        "api": "openai-completions",
                        "models": [
                            {
                                "id": "stub-1",
                                "name": "stub-1",
                                "reasoning": False,
                                "input": ["text"],
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                                "contextWindow": 32000,
                                "maxTokens": 8000,
                            }
                        ],
                    }
                }
            },
            "agents": {
                "defaults": {
                    "model": {"primary": "stub/stub-1"},
                    "workspace": str(self.workspace),
                    "heartbeat": {"every": "0m"},
                }
            },
            # The plugin is installed from its tarball (install_plugin) into the state dir.
            "plugins": {
                "slots": {"contextEngine": "context-engine"},
                "entries": {
                    "context-engine": {
                        "enabled": True,
                        # Tiny (the default is 64, more than the whole conversation), so that
                        # tool-loop calls send their newest messages and the plugin puts the
                        # rest back, and pre-prompt calls are asked for the whole history.
                        "config": {"baseUrl": self.service_url, "assembleTailMessages": 2},
                    }
                },
            },
            "logging": {"file": str(self.log_file), "level": "debug"},
        }
        self.config_path.write_text(json.dumps(config, indent=2))

    def env(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env.update(
            {
                "HOME": str(self.home),
                "OPENCLAW_STATE_DIR": str(self.state),
                "OPENCLAW_CONFIG_PATH": str(self.config_path),
                "OPENCLAW_SKIP_CHANNELS": "1",
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_GATEWAY_TOKEN": self.gateway_token,
                "OPENCLAW_GATEWAY_PORT": str(self.gateway_port),
                "NO_COLOR": "1",
            }
        )
        return env

    def cli(self, args: Sequence[str], timeout: float = 180) -> CliResult:
        argv = [str(self.node), str(self.openclaw), *args]
        started = time.monotonic()
        proc = subprocess.run(
            argv,
            env=self.env(),
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return CliResult(
            list(args), proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started
        )

    def install_plugin(self, tarball: Path, release: str) -> CliResult:
        result = self.cli(
            ["plugins", "install", str(tarball), *plugin_install_flags(release)], timeout=240
        )
        if result.returncode != 0:
            raise RuntimeError(f"plugins install failed:\n{result.stdout}\n{result.stderr}")
        return result

    def agent_turn(
        self, session_key: str, message: str, *, local: bool = False, timeout: float = 180
    ) -> CliResult:
        args = [
            "agent",
            "--agent",
            "main",
            "--session-key",
            session_key,
            "--message",
            message,
            "--json",
        ]
        if local:
            args.insert(1, "--local")
        return self.cli(args, timeout=timeout)

    def start_gateway(self, timeout: float = 150) -> float:
        started = time.monotonic()
        self._gateway_log = open(self.gateway_log_path, "ab")  # noqa: SIM115 - closed in stop_gateway()
        argv = [
            str(self.node),
            str(self.openclaw),
            "gateway",
            "run",
            "--allow-unconfigured",
            "--port",
            str(self.gateway_port),
            "--bind",
            "loopback",
            "--auth",
            "token",
        ]
        self.gateway = subprocess.Popen(
            argv,
            env=self.env(),
            cwd=self.root,
            stdout=self._gateway_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def listening() -> bool:
            if self.gateway is not None and self.gateway.poll() is not None:
                raise RuntimeError(
                    f"the gateway exited ({self.gateway.returncode}); see {self.gateway_log_path}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.gateway_port), timeout=1):
                    return True
            except OSError:
                return False

        wait_until(listening, timeout, "the OpenClaw gateway port", interval=0.5)
        return time.monotonic() - started

    def stop_gateway(self) -> None:
        if self.gateway is not None:
            _stop(self.gateway, timeout=20)
            self.gateway = None
        if self._gateway_log is not None:
            self._gateway_log.close()
            self._gateway_log = None

    def plugin_log_lines(self) -> list[str]:
        """The plugin's own log lines (`context-engine: hook=...`) from the host's file log."""
        lines: list[str] = []
        for path in sorted(self.root.glob("openclaw*.log")):
            for raw in path.read_text(errors="replace").splitlines():
                if "context-engine: hook=" in raw:
                    lines.append(raw)
        return lines


HOOK_LINE = re.compile(
    r"context-engine: hook=(?P<hook>[\w.]+) ms=(?P<ms>[\d.]+) outcome=(?P<outcome>\w+)"
)


def hook_timings(lines: list[str]) -> list[tuple[str, float, str]]:
    out: list[tuple[str, float, str]] = []
    seen: set[str] = set()
    for line in lines:
        # the file log is JSON lines; a message may be mirrored into several fields
        m = HOOK_LINE.search(line)
        if m and line not in seen:
            seen.add(line)
            out.append((m.group("hook"), float(m.group("ms")), m.group("outcome")))
    return out
