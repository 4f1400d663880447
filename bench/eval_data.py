"""The retrieval-quality evaluation set of ``bench/retrieval_eval.py``.

One user (a backend engineer on a shop platform) and her agent: 60 memories of every category
(profile, preferences, entities, events, cases, experiences), about a fifth of them in Chinese, with
the hostnames, error codes, dates and versions such memories hold; and 40 queries, each with the
ids of the memories that answer it. Query kinds:

- ``paraphrase``: English, the memory's meaning in other words;
- ``chinese``: a Chinese question about a Chinese memory;
- ``cross-language``: a Chinese question about an English memory, or the other way round;
- ``date``: when something happened, or what happened on a date;
- ``identifier``: an error code, hostname, port or status string, as a user would paste it.

Events and cases carry the date they happened; the evaluation stores it as ``observedAt`` relative
to ``REFERENCE_DAY`` (treated as today), so temporal decay sees the same ages on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

REFERENCE_DAY = date(2025, 12, 1)


@dataclass(frozen=True, slots=True)
class EvalMemory:
    id: str
    category: str
    title: str
    content: str
    happened: date | None = None  # events and cases


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    kind: str
    text: str
    relevant: tuple[str, ...]


def _experience(situation: list[str], approach: list[str], reflect: list[str]) -> str:
    def bullets(lines: list[str]) -> str:
        return "\n".join(f"- {line}" for line in lines)

    return f"## Situation\n{bullets(situation)}\n## Approach\n{bullets(approach)}\n## Reflect\n{bullets(reflect)}"


MEMORIES: list[EvalMemory] = [
    # profile
    EvalMemory(
        "profile",
        "profile",
        "Mei Lin",
        "Mei Lin is a senior backend engineer in the commerce group at Acme, based in Shanghai; she works "
        "mostly in Python and Go.",
    ),
    # preferences
    EvalMemory(
        "p-editor",
        "preferences",
        "Editor: Neovim with LazyVim",
        "Mei writes all her code in Neovim with the LazyVim distribution and does not want suggestions for "
        "VS Code extensions.",
    ),
    EvalMemory(
        "p-answer-style",
        "preferences",
        "Short answers, code first",
        "Prefers short answers: the command or the code first, then at most three bullet points of "
        "explanation.",
    ),
    EvalMemory(
        "p-lang-zh",
        "preferences",
        "沟通用中文，代码用英文",
        "和团队沟通时用中文，但代码注释和提交信息一律用英文。",
    ),
    EvalMemory(
        "p-python-tooling",
        "preferences",
        "Python tooling: uv and ruff",
        "For Python projects she uses uv for environments and dependencies and ruff for linting and "
        "formatting; never suggest black, poetry or pip-tools.",
    ),
    EvalMemory(
        "p-testing",
        "preferences",
        "pytest with plain asserts",
        "Likes tests written with pytest and plain assert statements, and avoids mocks where a fake or a "
        "temporary database works.",
    ),
    EvalMemory(
        "p-timezone",
        "preferences",
        "Meetings in Shanghai working hours",
        "Works from Shanghai (UTC+8): schedule meetings between 10:00 and 18:00 local time and never on "
        "Friday afternoons.",
    ),
    EvalMemory(
        "p-git",
        "preferences",
        "Git: rebase, imperative subjects",
        "Prefers rebasing over merge commits; commit subjects in the imperative mood and under 72 "
        "characters.",
    ),
    EvalMemory(
        "p-coffee",
        "preferences",
        "咖啡和过敏",
        "喜欢喝手冲咖啡，不加糖也不加奶；对花生过敏，订团队午餐时要注意。",
    ),
    EvalMemory(
        "p-docs",
        "preferences",
        "Docs in Markdown with runnable examples",
        "Wants documentation in Markdown with runnable examples; dislikes screenshots of code.",
    ),
    EvalMemory(
        "p-review",
        "preferences",
        "代码评审先看正确性",
        "代码评审时希望先指出正确性和并发问题，再谈风格；不要逐行挑格式，格式交给 ruff。",
    ),
    EvalMemory(
        "p-paging",
        "preferences",
        "No weekend pages below SEV1",
        "Do not page Mei on weekends unless the incident is SEV1; a Slack message is enough otherwise.",
    ),
    EvalMemory(
        "p-sql",
        "preferences",
        "Raw SQL for reports",
        "For reporting queries she prefers hand-written SQL through SQLAlchemy Core over the ORM.",
    ),
    EvalMemory(
        "p-meeting-notes",
        "preferences",
        "Meeting notes as decisions and actions",
        "Wants meeting notes as a list of decisions and action items with an owner each, never a "
        "transcript.",
    ),
    # entities
    EvalMemory(
        "e-alice",
        "entities",
        "Alice Wang, payments tech lead",
        "Alice Wang is the tech lead of the payments team and approves every schema migration on the "
        "ledger database.",
    ),
    EvalMemory(
        "e-bob",
        "entities",
        "Bob Schneider, SRE",
        "Bob Schneider from the SRE team owns the Kubernetes clusters and the on-call rotation; reach him "
        "in the #sre-oncall Slack channel.",
    ),
    EvalMemory(
        "e-zhang",
        "entities",
        "张伟（数据平台）",
        "张伟是数据平台组的负责人，负责 ClickHouse 集群和每天凌晨的 ETL 任务。",
    ),
    EvalMemory(
        "e-host-db",
        "entities",
        "db-prod-3.internal",
        "db-prod-3.internal is the primary Postgres server of the orders service; its replicas are "
        "db-prod-4 and db-prod-5.",
    ),
    EvalMemory(
        "e-host-cache",
        "entities",
        "cache-eu-1.internal",
        "cache-eu-1.internal runs Redis 7 for session storage in the EU region, with maxmemory 8 GB and "
        "the allkeys-lru policy.",
    ),
    EvalMemory(
        "e-ci",
        "entities",
        "CI runners",
        "The CI pipelines run on the self-hosted GitHub Actions runners ci-runner-07 and ci-runner-08, "
        "16 cores each.",
    ),
    EvalMemory(
        "e-repo",
        "entities",
        "shop-platform monorepo",
        "The main repository is github.com/acme/shop-platform, a monorepo with the services under "
        "services/ and the shared libraries under libs/.",
    ),
    EvalMemory(
        "e-ledger",
        "entities",
        "ledger service",
        "The ledger service is written in Go, serves gRPC on port 7443 and writes to the ledger database "
        "through an outbox table.",
    ),
    EvalMemory(
        "e-notify",
        "entities",
        "通知服务 notification-service",
        "通知服务（notification-service）是用 Kotlin 写的，从 Kafka 主题 user-events 读取事件，再发送短信和邮件。",
    ),
    EvalMemory(
        "e-stripe",
        "entities",
        "Stripe webhook",
        "Payments go through Stripe; the webhook endpoint is /v1/stripe/webhook and its signing secret "
        "lives in Vault under payments/stripe.",
    ),
    EvalMemory(
        "e-manager",
        "entities",
        "Carlos Mendes, manager",
        "Mei's manager is Carlos Mendes, engineering manager of the commerce group; their 1:1 is on "
        "Tuesdays.",
    ),
    EvalMemory(
        "e-atlas",
        "entities",
        "Project Atlas",
        "Project Atlas moves the checkout flow out of the monolith into the new checkout-service; it is due "
        "by the end of Q3.",
    ),
    EvalMemory(
        "e-grafana",
        "entities",
        "Grafana dashboards",
        "Dashboards live in Grafana at grafana.acme.internal; 'Checkout latency' is the one Mei opens "
        "first.",
    ),
    EvalMemory(
        "e-staging",
        "entities",
        "staging-k8s 集群",
        "staging-k8s 集群在 cn-north-1 区域，命名空间是 shop-staging，每次合并到 main 分支都会自动部署。",
    ),
    # events
    EvalMemory(
        "ev-deploy-0312",
        "events",
        "checkout-service deploy failed 2025-03-12",
        "On 2025-03-12 the checkout-service deploy to production failed with ERR_SCHEMA_042 because the "
        "migration ran after the new pods had started; it was rolled back after 25 minutes.",
        date(2025, 3, 12),
    ),
    EvalMemory(
        "ev-redis-outage",
        "events",
        "Session outage in the spring sale",
        "On 2025-04-02, during the spring sale, cache-eu-1 ran out of memory and user sessions were "
        "dropped for 14 minutes (SEV2).",
        date(2025, 4, 2),
    ),
    EvalMemory(
        "ev-pg-upgrade",
        "events",
        "Postgres 15 upgrade",
        "In May 2025 the team upgraded db-prod-3 from Postgres 13 to 15 with logical replication; the "
        "downtime was under two minutes.",
        date(2025, 5, 20),
    ),
    EvalMemory(
        "ev-release-240",
        "events",
        "Mobile app 2.4.0",
        "Version 2.4.0 of the mobile app, with the new one-page checkout, was released on 2025-06-18.",
        date(2025, 6, 18),
    ),
    EvalMemory(
        "ev-offsite",
        "events",
        "杭州团建",
        "2025年7月8日到10日，团队在杭州团建，讨论了下半年的 OKR。",
        date(2025, 7, 8),
    ),
    EvalMemory(
        "ev-atlas-kickoff",
        "events",
        "Atlas kickoff",
        "Project Atlas kicked off on 2025-07-01 with Alice Wang and Carlos Mendes; the first milestone "
        "is moving cart validation.",
        date(2025, 7, 1),
    ),
    EvalMemory(
        "ev-sms-delay",
        "events",
        "短信延迟事故",
        "2025年8月21日凌晨，通知服务的 Kafka 消费积压，短信延迟了大约两个小时。",
        date(2025, 8, 21),
    ),
    EvalMemory(
        "ev-stripe-rotation",
        "events",
        "Stripe secret rotated",
        "The Stripe webhook signing secret was rotated on 2025-09-01; the old secret stopped working the "
        "same day.",
        date(2025, 9, 1),
    ),
    EvalMemory(
        "ev-k8s-upgrade",
        "events",
        "Kubernetes 1.30 upgrade",
        "Bob upgraded the production Kubernetes cluster to 1.30 on 2025-09-15; two deployments that used "
        "removed APIs had to be patched.",
        date(2025, 9, 15),
    ),
    EvalMemory(
        "ev-interview",
        "events",
        "Interview for payments",
        "Mei interviewed a backend candidate for the payments team on 2025-10-03 and recommended hiring "
        "him.",
        date(2025, 10, 3),
    ),
    EvalMemory(
        "ev-cert-expiry",
        "events",
        "api.acme.com certificate expired",
        "On 2025-10-27 the TLS certificate of api.acme.com expired at 08:00 UTC and the mobile clients "
        "failed for 40 minutes.",
        date(2025, 10, 27),
    ),
    EvalMemory(
        "ev-clickhouse",
        "events",
        "报表迁移到 ClickHouse",
        "2025年11月3日，数据平台把报表从 MySQL 迁到了 ClickHouse，查询快了大约十倍。",
        date(2025, 11, 3),
    ),
    EvalMemory(
        "ev-ci-outage",
        "events",
        "CI queue outage",
        "On 2025-11-12 ci-runner-07 ran out of disk space and every pipeline queued for three hours.",
        date(2025, 11, 12),
    ),
    EvalMemory(
        "ev-vacation",
        "events",
        "Year-end vacation",
        "Mei is on vacation from 2025-12-22 to 2026-01-02 and asked not to schedule anything in that "
        "time.",
        date(2025, 11, 25),
    ),
    # cases
    EvalMemory(
        "c-err-schema-042",
        "cases",
        "ERR_SCHEMA_042",
        "ERR_SCHEMA_042 means the application started before its migration finished; the fix is to run "
        "migrations as a pre-deploy job and gate the pods on the schema version.",
        date(2025, 3, 13),
    ),
    EvalMemory(
        "c-e1103",
        "cases",
        "E1103 on the Stripe webhook",
        "Error E1103 'signature verification failed' on /v1/stripe/webhook comes from an outdated signing "
        "secret: update STRIPE_WEBHOOK_SECRET in Vault and restart the payments pods.",
        date(2025, 9, 1),
    ),
    EvalMemory(
        "c-redis-oom",
        "cases",
        "Redis OOM on cache-eu-1",
        "\"OOM command not allowed when used memory > 'maxmemory'\" on cache-eu-1: either raise maxmemory "
        "or shorten the session TTL; we chose a 12-hour TTL.",
        date(2025, 4, 3),
    ),
    EvalMemory(
        "c-deadlock",
        "cases",
        "Deadlock in the orders service",
        "Postgres 'deadlock detected' (SQLSTATE 40P01) in the orders service came from updating "
        "order_items before orders; always lock the orders row first.",
        date(2025, 6, 5),
    ),
    EvalMemory(
        "c-flaky-refund",
        "cases",
        "Flaky test_refund_partial",
        "test_refund_partial was flaky because it depended on the wall clock; freezing time with "
        "time-machine fixed it.",
        date(2025, 8, 2),
    ),
    EvalMemory(
        "c-gateway-504",
        "cases",
        "网关 504 超时",
        "网关返回 504 Gateway Timeout，原因是上游 ledger 服务的 gRPC 超时只设了 1 秒；改成 5 秒并加上重试后恢复正常。",
        date(2025, 7, 22),
    ),
    EvalMemory(
        "c-csv-encoding",
        "cases",
        "CSV 中文乱码",
        "导出的 CSV 文件用 Excel 打开时中文是乱码，解决办法是写文件时加上 UTF-8 BOM。",
        date(2025, 10, 14),
    ),
    EvalMemory(
        "c-crashloop",
        "cases",
        "CrashLoopBackOff after the 1.30 upgrade",
        "checkout-service pods went into CrashLoopBackOff after the 1.30 upgrade because the liveness "
        "probe used the removed /healthz/legacy path; it now uses /healthz.",
        date(2025, 9, 16),
    ),
    EvalMemory(
        "c-kafka-lag",
        "cases",
        "Consumer lag on user-events",
        "Consumer lag on the user-events topic grew because the notification consumers fetched "
        "max.poll.records=500 with slow SMS calls; we lowered it to 50 and scaled to 6 replicas.",
        date(2025, 8, 21),
    ),
    EvalMemory(
        "c-cert-renewal",
        "cases",
        "x509 certificate has expired",
        "'x509: certificate has expired or is not yet valid' for api.acme.com: cert-manager could not "
        "renew because the DNS-01 solver's API token had been revoked.",
        date(2025, 10, 27),
    ),
    EvalMemory(
        "c-disk-full",
        "cases",
        "No space left on device on CI",
        "'No space left on device' on ci-runner-07: Docker images were never pruned; a nightly "
        "'docker system prune -af' cron job runs now.",
        date(2025, 11, 12),
    ),
    EvalMemory(
        "c-n-plus-one",
        "cases",
        "Slow orders list",
        "The orders list endpoint took 2.3 s at p95 because of an N+1 query on order_items; selectinload "
        "fixed it.",
        date(2025, 5, 8),
    ),
    # experiences (the agent's)
    EvalMemory(
        "x-migration-deploy",
        "experiences",
        "Deploying a release that carries a migration",
        _experience(
            ["A service release includes a database migration"],
            [
                "Run the migration as a separate pre-deploy job",
                "Check the schema version before rolling the pods",
                "Roll the pods only after the migration job succeeded",
            ],
            [
                "Reversing the order caused ERR_SCHEMA_042 once",
                "Keep the rollback command ready before starting",
            ],
        ),
    ),
    EvalMemory(
        "x-secret-rotation",
        "experiences",
        "Rotating a webhook signing secret",
        _experience(
            ["A webhook signing secret has to be rotated"],
            [
                "Add the new secret next to the old one",
                "Deploy code that accepts both",
                "Switch the provider to the new secret",
                "Remove the old secret last",
            ],
            ["Revoking the old secret first breaks every webhook until the deploy finishes"],
        ),
    ),
    EvalMemory(
        "x-flaky-tests",
        "experiences",
        "Diagnosing a flaky test",
        _experience(
            ["A test fails intermittently on CI but passes locally"],
            [
                "Re-run it alone with -p no:randomly",
                "Look for wall-clock, ordering or shared-state dependencies",
                "Freeze time or isolate the state",
            ],
            ["Adding retries to the test hides the bug instead of fixing it"],
        ),
    ),
    EvalMemory(
        "x-slow-endpoint",
        "experiences",
        "排查接口变慢",
        _experience(
            ["接口变慢，p95 超过 1 秒"],
            ["先看慢查询日志", "检查有没有 N+1 查询", "确认索引是否生效"],
            ["不要一上来就加缓存掩盖问题"],
        ),
    ),
    EvalMemory(
        "x-incident-comms",
        "experiences",
        "Communicating during an incident",
        _experience(
            ["A production incident is ongoing"],
            [
                "Post a status update in #incidents every 15 minutes",
                "Name one incident commander",
                "Write the timeline while it happens",
            ],
            ["Silence for more than 15 minutes made stakeholders escalate"],
        ),
    ),
    EvalMemory(
        "x-k8s-upgrade",
        "experiences",
        "Preparing a Kubernetes version upgrade",
        _experience(
            ["The cluster's Kubernetes version is about to be upgraded"],
            [
                "Scan manifests for removed APIs with pluto",
                "Check liveness and readiness probe paths",
                "Upgrade staging first and watch for CrashLoopBackOff",
            ],
            ["Two deployments broke last time because of removed APIs"],
        ),
    ),
]

QUERIES: list[EvalQuery] = [
    # paraphrase
    EvalQuery("q01", "paraphrase", "what text editor should I assume she codes in", ("p-editor",)),
    EvalQuery(
        "q02", "paraphrase", "how does the user like replies to be formatted", ("p-answer-style",)
    ),
    EvalQuery(
        "q03",
        "paraphrase",
        "which tools manage Python virtual environments and linting for her",
        ("p-python-tooling",),
    ),
    EvalQuery(
        "q04", "paraphrase", "who signs off on database schema changes for the ledger", ("e-alice",)
    ),
    EvalQuery(
        "q05",
        "paraphrase",
        "who is responsible for the on-call schedule of the clusters",
        ("e-bob",),
    ),
    EvalQuery("q06", "paraphrase", "why was the page listing orders so slow", ("c-n-plus-one",)),
    EvalQuery(
        "q07",
        "paraphrase",
        "how do we avoid lock ordering problems between orders and their items",
        ("c-deadlock",),
    ),
    EvalQuery(
        "q08", "paraphrase", "what are her rules for git history and commit messages", ("p-git",)
    ),
    EvalQuery(
        "q09",
        "paraphrase",
        "what should the agent check before bumping the Kubernetes version",
        ("x-k8s-upgrade", "c-crashloop"),
    ),
    # chinese
    EvalQuery("q10", "chinese", "数据平台组谁负责？", ("e-zhang",)),
    EvalQuery("q11", "chinese", "通知服务是用什么语言开发的", ("e-notify",)),
    EvalQuery("q12", "chinese", "导出的表格打开是乱码怎么办", ("c-csv-encoding",)),
    EvalQuery("q13", "chinese", "网关超时的问题最后是怎么解决的", ("c-gateway-504",)),
    EvalQuery("q14", "chinese", "她喝咖啡有什么习惯", ("p-coffee",)),
    EvalQuery("q15", "chinese", "代码评审的时候应该先关注什么", ("p-review",)),
    EvalQuery("q16", "chinese", "团建是在哪个城市", ("ev-offsite",)),
    # cross-language
    EvalQuery("q17", "cross-language", "用户平时用什么编辑器写代码", ("p-editor",)),
    EvalQuery("q18", "cross-language", "支付团队的技术负责人是谁", ("e-alice",)),
    EvalQuery("q19", "cross-language", "Redis 内存满了应该怎么处理", ("c-redis-oom",)),
    EvalQuery("q20", "cross-language", "Stripe 回调签名校验失败怎么办", ("c-e1103",)),
    EvalQuery(
        "q21",
        "cross-language",
        "what caused the SMS delays from the notification service",
        ("ev-sms-delay", "c-kafka-lag"),
    ),
    EvalQuery(
        "q22",
        "cross-language",
        "which language should code comments and commit messages be in",
        ("p-lang-zh",),
    ),
    EvalQuery(
        "q23", "cross-language", "when did the reports move to ClickHouse", ("ev-clickhouse",)
    ),
    EvalQuery(
        "q24",
        "cross-language",
        "where is the staging cluster and how does code get deployed there",
        ("e-staging",),
    ),
    # date
    EvalQuery("q25", "date", "what happened on 2025-03-12", ("ev-deploy-0312",)),
    EvalQuery("q26", "date", "when was the Stripe webhook secret rotated", ("ev-stripe-rotation",)),
    EvalQuery(
        "q27", "date", "what went wrong during the spring sale in April", ("ev-redis-outage",)
    ),
    EvalQuery("q28", "date", "when is Mei away at the end of the year", ("ev-vacation",)),
    EvalQuery("q29", "date", "2025年8月21日出了什么事", ("ev-sms-delay",)),
    EvalQuery(
        "q30", "date", "which release shipped the one-page checkout, and when", ("ev-release-240",)
    ),
    EvalQuery("q31", "date", "when did Project Atlas start", ("ev-atlas-kickoff",)),
    # identifier
    EvalQuery("q32", "identifier", "ERR_SCHEMA_042", ("c-err-schema-042", "ev-deploy-0312")),
    EvalQuery("q33", "identifier", "E1103", ("c-e1103",)),
    EvalQuery("q34", "identifier", "db-prod-3", ("e-host-db", "ev-pg-upgrade")),
    EvalQuery("q35", "identifier", "SQLSTATE 40P01", ("c-deadlock",)),
    EvalQuery("q36", "identifier", "ci-runner-07 problems", ("c-disk-full", "ev-ci-outage")),
    EvalQuery(
        "q37",
        "identifier",
        "x509: certificate has expired api.acme.com",
        ("c-cert-renewal", "ev-cert-expiry"),
    ),
    EvalQuery(
        "q38", "identifier", "cache-eu-1", ("e-host-cache", "c-redis-oom", "ev-redis-outage")
    ),
    EvalQuery("q39", "identifier", "CrashLoopBackOff checkout-service", ("c-crashloop",)),
    EvalQuery("q40", "identifier", "port 7443 gRPC", ("e-ledger",)),
]

KINDS = ("paraphrase", "chinese", "cross-language", "date", "identifier")
