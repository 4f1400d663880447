"""The processes under test: the embedding stub, this service, and OpenViking, all on loopback.

OpenViking runs offline: its ``ov.conf`` puts storage in the run's temporary directory, uses the
``dev`` auth mode (no keys; the server refuses it on anything but loopback), leaves VLM/LLM
unconfigured, turns memory extraction off, and points its dense embedder at the stub. Its
environment has ``HOME`` inside the temporary directory and every proxy variable aimed at a closed
loopback port (with ``NO_PROXY`` for 127.0.0.1), so a library that tried to reach out would fail
rather than leave the machine. ``sockets()`` lists the remote ends of every socket a process
holds, and the benchmark checks them after each workload: only 127.0.0.1 is allowed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.common import NO_AUTO_COMMIT_ENV, REPO_ROOT, Server, free_port

EMBED_DIMENSION = 384  # this service's vector index holds 384 dimensions; the peer gets the same
STUB_MODEL = "stub-embed"

# Variables that would make a library reach out through a proxy, all aimed at a closed port.
_DEAD_PROXY = "http://127.0.0.1:9"
OFFLINE_ENV = {
    "HTTP_PROXY": _DEAD_PROXY,
    "HTTPS_PROXY": _DEAD_PROXY,
    "ALL_PROXY": _DEAD_PROXY,
    "http_proxy": _DEAD_PROXY,
    "https_proxy": _DEAD_PROXY,
    "all_proxy": _DEAD_PROXY,
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "PIP_NO_INDEX": "1",
}


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout_s: float, log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return time.monotonic() - started
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not healthy after {timeout_s:.0f} s:\n{_tail(log)}")


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


# --- /proc helpers -------------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children.get(current, []))
    return out


def rss_mb(pid: int, field: str = "VmRSS") -> float | None:
    """Resident memory of the process tree in MB (10^6 bytes): ``VmRSS`` now, ``VmHWM`` the peak."""
    total = 0
    found = False
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(f"{field}:"):
                    total += int(line.split()[1]) * 1024
                    found = True
        except OSError:
            continue
    return total / 1e6 if found else None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process tree so far."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


def _hex_addr(text: str) -> str:
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return f"{'.'.join(str(b) for b in raw[::-1])}:{int(port, 16)}"
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    flat = b"".join(words)
    if flat[:12] == b"\x00" * 10 + b"\xff\xff":
        return f"{'.'.join(str(b) for b in flat[12:])}:{int(port, 16)}"
    if flat == b"\x00" * 15 + b"\x01":
        return f"::1:{int(port, 16)}"
    return f"[{flat.hex()}]:{int(port, 16)}"


def sockets(pid: int) -> list[str]:
    """Remote ends (``addr:port``) of the inet sockets held by the process tree, listeners excluded."""
    inodes: set[str] = set()
    for member in process_tree(pid):
        fd_dir = Path(f"/proc/{member}/fd")
        try:
            for fd in fd_dir.iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    remotes: list[str] = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 10 or parts[9] not in inodes:
                continue
            remote = _hex_addr(parts[2])
            if remote.endswith(":0"):  # listening or unconnected
                continue
            remotes.append(remote)
    return remotes


def non_loopback(remotes: list[str]) -> list[str]:
    return [r for r in remotes if not (r.startswith(("127.", "::1:")))]


# --- the embedding stub --------------------------------------------------------------------------


class EmbeddingStub:
    """``python -m bench.peer.stub`` on a free loopback port."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "stub.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> EmbeddingStub:
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bench.peer.stub",
                    "--port",
                    str(self.port),
                    "--dimension",
                    str(EMBED_DIMENSION),
                ],
                cwd=REPO_ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _wait_healthy(f"{self.base_url}/health", self.proc, 30, self.log_path)
        return self

    def __exit__(self, *exc: object) -> None:
        _stop(self.proc)

    def stats(self) -> dict[str, dict[str, int]]:
        return httpx.get(f"{self.base_url}/stats", timeout=5).json()


# --- this service --------------------------------------------------------------------------------


def ours(workdir: Path, stub: EmbeddingStub) -> Server:
    """``python -m app serve`` with the stub as its embedder and no automatic commit."""
    env = {
        **NO_AUTO_COMMIT_ENV,
        **OFFLINE_ENV,
        "CE_EMBEDDING__PROVIDER": "openai",
        "CE_EMBEDDING__BASE_URL": f"{stub.base_url}/ours/v1",
        "CE_EMBEDDING__MODEL": STUB_MODEL,
        "CE_EMBEDDING__API_KEY": "stub",
        "CE_EMBEDDING__DIMENSIONS": str(EMBED_DIMENSION),
    }
    return Server(workdir, workdir / "ours.db", env)


# --- OpenViking ----------------------------------------------------------------------------------


def peer_config(workdir: Path, port: int, stub: EmbeddingStub) -> dict:
    """An ``ov.conf`` that runs OpenViking on loopback without any remote service."""
    return {
        "storage": {"workspace": str(workdir / "ov-data")},
        "embedding": {
            "dense": {
                "provider": "openai",
                "model": STUB_MODEL,
                "api_key": "stub",
                "api_base": f"{stub.base_url}/peer/v1",
                "dimension": EMBED_DIMENSION,
            },
        },
        # No "vlm" section: no model is configured, so Phase 2 writes no LLM summary.
        "memory": {"extraction_enabled": False},
        "log": {"level": "WARNING"},
        "server": {"host": "127.0.0.1", "port": port, "auth_mode": "dev"},
    }


class PeerServer:
    """``openviking-server`` from the cache venv, on a free loopback port."""

    def __init__(self, workdir: Path, venv: Path, stub: EmbeddingStub) -> None:
        self.workdir = workdir
        self.venv = venv
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.config_path = workdir / "ov.conf"
        self.config_path.write_text(json.dumps(peer_config(workdir, self.port, stub), indent=2))
        self.log_path = workdir / "openviking.log"
        home = workdir / "home"
        home.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENVIKING", "CE_"))}
        env.update(OFFLINE_ENV)
        env.update({"HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"})
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None

    def __enter__(self) -> PeerServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 180.0) -> None:
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.venv / "bin" / "openviking-server"),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--config",
                    str(self.config_path),
                ],
                cwd=self.workdir,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.startup_s = _wait_healthy(
            f"{self.base_url}/health", self.proc, timeout_s, self.log_path
        )

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        _stop(proc)

    def log_tail(self, chars: int = 3000) -> str:
        return _tail(self.log_path, chars)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid
