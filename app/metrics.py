"""The service's Prometheus metrics, one registry per app instance.

Per-tenant series carry a ``tenant`` label. A key sees only its own tenant's series at
``/metrics`` (another tenant's id is never shown to it); the keyless local caller and a key with
the ``metrics:all-tenants`` scope (an operator's scraper) see every tenant.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ce_http_requests",
            "HTTP requests by route, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ce_http_request_duration_seconds",
            "HTTP request latency by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tenant_requests = Counter(
            "ce_tenant_requests",
            "Authenticated requests by tenant, class (hooks, search, other) and status.",
            ["tenant", "kind", "status"],
            registry=self.registry,
        )
        self.tenant_rate_limited = Counter(
            "ce_tenant_rate_limited",
            "Requests refused by a tenant's rate limit, by tenant and class.",
            ["tenant", "kind"],
            registry=self.registry,
        )
        self.phase2_jobs = Counter(
            "ce_phase2_jobs", "Phase 2 job runs by outcome.", ["outcome"], registry=self.registry
        )
        self.phase2_duration = Histogram(
            "ce_phase2_job_duration_seconds",
            "Phase 2 job durations.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "ce_phase2_queue_depth", "Phase 2 jobs queued or running.", registry=self.registry
        )
        self.llm_calls = Counter(
            "ce_llm_calls", "LLM calls by outcome.", ["outcome"], registry=self.registry
        )
        self.embedding_calls = Counter(
            "ce_embedding_calls",
            "Embedding provider calls (and cache hits) by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self.embedding_texts = Counter(
            "ce_embedding_texts",
            "Texts embedded (or served from the cache) by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        self.embedding_latency = Histogram(
            "ce_embedding_call_duration_seconds",
            "Embedding provider call latency.",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.llm_latency = Histogram(
            "ce_llm_call_duration_seconds",
            "LLM call latency (one HTTP attempt).",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.llm_tokens = Counter(
            "ce_llm_tokens", "LLM tokens by kind.", ["kind"], registry=self.registry
        )
        # By host version and hook: after a host upgrade, a hook whose series stops growing (or
        # whose last-call time stops moving) is one the host no longer calls.
        self.hook_calls = Counter(
            "ce_hook_calls",
            "OpenClaw hook calls by tenant, host version, plugin version and hook.",
            ["tenant", "host_version", "plugin_version", "hook"],
            registry=self.registry,
        )
        self.hook_last_call = Gauge(
            "ce_hook_last_call_timestamp_seconds",
            "Unix time of the newest call of each hook, by tenant, host version and hook.",
            ["tenant", "host_version", "hook"],
            registry=self.registry,
        )
        self.hook_flags = Counter(
            "ce_session_hook_flags",
            "Sessions flagged for hooks that stopped pairing up, by tenant, host version, hook "
            "(the call that raised the flag) and flag.",
            ["tenant", "host_version", "hook", "flag"],
            registry=self.registry,
        )

    def observe_embedding(self, outcome: str, texts: int, seconds: float) -> None:
        self.embedding_calls.labels(outcome).inc()
        self.embedding_texts.labels(outcome).inc(texts)
        if outcome != "cache_hit":
            self.embedding_latency.observe(seconds)

    def observe_job(self, outcome: str, seconds: float) -> None:
        self.phase2_jobs.labels(outcome).inc()
        self.phase2_duration.observe(seconds)

    def observe_llm(self, outcome: str, usage: dict[str, int], seconds: float) -> None:
        self.llm_calls.labels(outcome).inc()
        self.llm_latency.observe(seconds)
        for kind in ("prompt_tokens", "completion_tokens"):
            if usage.get(kind):
                self.llm_tokens.labels(kind).inc(usage[kind])

    def observe_hook(
        self, tenant: str, host: str, plugin: str, hook: str, at: float, flags: list[str]
    ) -> None:
        self.hook_calls.labels(tenant, host, plugin, hook).inc()
        self.hook_last_call.labels(tenant, host, hook).set(at)
        for flag in flags:
            self.hook_flags.labels(tenant, host, hook, flag).inc()

    def render(self, tenant: str | None = None) -> bytes:
        """The exposition; with ``tenant``, per-tenant series of that tenant only."""
        if tenant is None:
            return generate_latest(self.registry)
        return generate_latest(_OneTenant(self.registry, tenant))


class _OneTenant:
    """A registry view that drops the samples of every other tenant."""

    def __init__(self, registry: CollectorRegistry, tenant: str) -> None:
        self._registry = registry
        self._tenant = tenant

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            family.samples = [
                sample
                for sample in family.samples
                if sample.labels.get("tenant", self._tenant) == self._tenant
            ]
            yield family
