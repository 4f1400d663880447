import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";

import { createClient } from "../src/client.ts";
import { resolveConfig } from "../src/config.ts";
import { assemblePhase, createContextEngine } from "../src/engine.ts";
import {
  PROVIDER_SECRET,
  assistantMessage,
  commitTurnParams,
  compactParams,
  prePromptParams,
  runtimeContext,
  toolLoopParams,
  userMessage,
} from "./host-params.ts";
import { StubService, closedPortUrl, keyPaths, silentLogger } from "./stub-service.ts";

const FORBIDDEN_KEYS = ["config", "runtimeContext", "llm", "skillsSnapshot", "sessionEntry", "abortSignal",
  "storePath", "runtimeSettings", "rewriteTranscriptEntries", "onCompactionHookMessages", "sessionTarget"];

function engineFor(url: string, config: Record<string, unknown> = {}) {
  const resolved = resolveConfig({ baseUrl: url, ...config });
  const log = silentLogger();
  const engine = createContextEngine({ config: resolved, client: createClient(resolved), logger: log.logger });
  return { engine, log };
}

/** The received body is plain data: no forbidden key at any depth, no secret anywhere. */
function assertClean(raw: string, body: unknown) {
  assert.ok(!raw.includes(PROVIDER_SECRET), "a provider secret reached the service");
  for (const path of keyPaths(body)) {
    const key = path.split(".").pop()!.replace(/\[\d+\]$/, "");
    assert.ok(!FORBIDDEN_KEYS.includes(key), `forbidden key in the request: ${path}`);
  }
}

const assembleAnswer = {
  messages: [{ role: "user", content: "[Session History Summary]\n# Working Memory" }, userMessage],
  estimatedTokens: 321,
  systemPromptAddition: "## Session Context Guide",
  prependContext: "<openviking-context>x</openviking-context>",
  diagnostics: { phase: "pre_prompt", mode: "assembled" },
};

describe("engine", () => {
  const service = new StubService();
  before(() => service.start());
  after(() => service.stop());
  beforeEach(() => {
    service.received.length = 0;
    service.routes.clear();
    service.aborted = 0;
  });

  test("declares durable transcript semantics and compaction ownership", () => {
    const { engine } = engineFor(service.url);
    assert.equal(engine.info.id, "context-engine");
    assert.equal(engine.info.ownsCompaction, true);
    assert.deepEqual(engine.info.transcriptSemantics, {
      currentTurnFence: "before-current-turn-entry-v1",
      turnAdvancementIdempotency: "atomic-idempotent-v1",
    });
    // no acceptedHostParams: the host must keep passing the runtimeContext key that tells the phases apart
    assert.equal("acceptedHostParams" in engine.info, false);
  });

  test("phase: the runtimeContext key (even undefined) means pre_prompt, its absence tool_loop", () => {
    assert.equal(assemblePhase(prePromptParams()), "pre_prompt");
    assert.equal(assemblePhase({ ...prePromptParams(), runtimeContext: runtimeContext() }), "pre_prompt");
    assert.equal(assemblePhase(toolLoopParams()), "tool_loop");
  });

  test("assemble sends the phase explicitly and only allow-listed JSON", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    const { engine } = engineFor(service.url, { autoRecall: false, agentExperience: { enabled: true, recallLimit: 2 } });
    const weird = { ...userMessage, callback: () => 1, signal: new AbortController().signal, tags: new Set(["b", "a"]) };
    await engine.assemble(prePromptParams([weird, assistantMessage]));
    await engine.assemble({ ...toolLoopParams(), runtimeContext: undefined }); // a key, even undefined: pre_prompt
    await engine.assemble(toolLoopParams());
    const [pre, preAgain, loop] = service.received;
    assert.deepEqual([pre.json.phase, preAgain.json.phase, loop.json.phase], ["pre_prompt", "pre_prompt", "tool_loop"]);
    assert.deepEqual(Object.keys(pre.json).sort(),
      ["availableTools", "messages", "model", "options", "phase", "prompt", "sessionId", "sessionKey", "tokenBudget"]);
    assert.deepEqual(pre.json.availableTools, ["exec", "read", "write"]); // a Set becomes a sorted array
    assert.deepEqual(loop.json.availableTools, ["exec", "read"]);
    assert.equal(pre.json.prompt, "what did I ask you to remember?");
    assert.equal(pre.json.tokenBudget, 12156);
    assert.deepEqual(pre.json.options, { autoRecall: false, agentExperience: { enabled: true, recallLimit: 2 } });
    // messages are forwarded as given, minus values that are not JSON
    assert.deepEqual(pre.json.messages[0], { ...userMessage, tags: ["a", "b"] });
    assert.deepEqual(pre.json.messages[1], assistantMessage);
    for (const r of service.received) assertClean(r.raw, r.json);
  });

  test("assemble returns what the host reads: messages, estimatedTokens, systemPromptAddition", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    const { engine } = engineFor(service.url);
    const result = await engine.assemble(prePromptParams());
    assert.deepEqual(result, {
      messages: assembleAnswer.messages,
      estimatedTokens: 321,
      systemPromptAddition: "## Session Context Guide",
    });
  });

  test("tool_loop returns the service's messages, a trailing recall envelope included", async () => {
    const envelope = { role: "user", content: "<openviking-context>\n- [preferences] mangosteen\n</openviking-context>" };
    service.on("POST /assemble", { json: { messages: [userMessage, assistantMessage, envelope], estimatedTokens: 60 } });
    const { engine } = engineFor(service.url);
    const result = await engine.assemble(toolLoopParams());
    assert.deepEqual(result.messages, [userMessage, assistantMessage, envelope]);
    assert.equal("systemPromptAddition" in result, false);
  });

  const longHistory = (n: number) =>
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { ...userMessage, content: `u${i}` } : { ...assistantMessage, id: `a${i}` }));

  test("pre_prompt sends a long history by its newest messages with the count left out", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    const history = longHistory(100);
    const { engine } = engineFor(service.url, { assembleTailMessages: 40 });
    const result = await engine.assemble(prePromptParams(history));
    assert.deepEqual(result.messages, assembleAnswer.messages);
    const [sent] = service.bodies("/assemble");
    assert.equal(service.received.length, 1);
    assert.equal(sent.omittedMessageCount, 60);
    assert.deepEqual(sent.messages, history.slice(60));
    // a short history is sent whole, without the count
    await engine.assemble(prePromptParams(history.slice(0, 40)));
    const [, short] = service.bodies("/assemble");
    assert.equal(short.messages.length, 40);
    assert.equal("omittedMessageCount" in short, false);
  });

  test("tool_loop sends the newest messages and puts the ones left out back before the answer", async () => {
    const history = longHistory(100);
    const envelope = { role: "user", content: "<openviking-context>\n- [preferences] mangosteen\n</openviking-context>" };
    service.on("POST /assemble", (req) => ({
      json: { messages: [...req.json.messages, envelope], estimatedTokens: 500, diagnostics: { mode: "assembled" } },
    }));
    const { engine } = engineFor(service.url, { assembleTailMessages: 40 });
    const params = toolLoopParams(history);
    const result = await engine.assemble(params);
    const [sent] = service.bodies("/assemble");
    assert.equal(sent.phase, "tool_loop");
    assert.equal(sent.omittedMessageCount, 60);
    assert.deepEqual(sent.messages, history.slice(60));
    assert.deepEqual(result.messages, [...history, envelope]);
    for (let i = 0; i < 60; i++) assert.equal(result.messages[i], params.messages[i]); // the host's own objects
    assert.ok(result.estimatedTokens > 500);
  });

  test("a tool_loop passthrough of the newest messages gives the host its whole history back", async () => {
    service.on("POST /assemble", (req) => ({
      json: { messages: req.json.messages, estimatedTokens: 1, diagnostics: { mode: "passthrough", reason: "no_recall_hits" } },
    }));
    const { engine } = engineFor(service.url, { assembleTailMessages: 40 });
    const params = toolLoopParams(longHistory(100));
    const result = await engine.assemble(params);
    assert.equal(result.messages, params.messages);
  });

  test("pre_prompt sends the whole history again when the service asks for it", async () => {
    const history = longHistory(100);
    service.on("POST /assemble", (req) =>
      req.json.omittedMessageCount
        ? { json: { messages: req.json.messages, estimatedTokens: 1, diagnostics: { mode: "passthrough", reason: "host_history_needed" } } }
        : { json: assembleAnswer },
    );
    const { engine, log } = engineFor(service.url, { assembleTailMessages: 40 });
    const result = await engine.assemble(prePromptParams(history));
    assert.deepEqual(result.messages, assembleAnswer.messages);
    const [tail, whole] = service.bodies("/assemble");
    assert.equal(tail.messages.length, 40);
    assert.equal(whole.messages.length, 100);
    assert.equal("omittedMessageCount" in whole, false);
    assert.ok(log.lines.some((l) => l.message.includes("sent=whole-again")));
  });

  test("a passthrough answer to the newest messages gives the host its whole history back", async () => {
    const history = longHistory(100);
    service.on("POST /assemble", (req) => ({
      json: { messages: req.json.messages, estimatedTokens: 1, diagnostics: { mode: "passthrough", reason: "no_stored_context" } },
    }));
    const { engine } = engineFor(service.url, { assembleTailMessages: 40 });
    const params = prePromptParams(history);
    const result = await engine.assemble(params);
    assert.equal(result.messages, params.messages);
    assert.equal(service.received.length, 1);
  });

  test("assembleTailMessages: 0 sends the whole history, the default the newest 64", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    const history = longHistory(100);
    await engineFor(service.url, { assembleTailMessages: 0 }).engine.assemble(prePromptParams(history));
    await engineFor(service.url, { assembleTailMessages: 3 }).engine.assemble(prePromptParams(history));
    await engineFor(service.url).engine.assemble(prePromptParams(history));
    const sizes = service.bodies("/assemble").map((b) => [b.messages.length, b.omittedMessageCount]);
    assert.deepEqual(sizes, [[100, undefined], [3, 97], [64, 36]]);
  });

  for (const [name, setup] of [
    ["a 500 answer", (s: StubService) => s.on("POST /assemble", { status: 500, json: { error: { code: "INTERNAL", message: "x", details: {} } } })],
    ["a body that is not JSON", (s: StubService) => s.on("POST /assemble", { text: "oops" })],
    ["an answer without messages", (s: StubService) => s.on("POST /assemble", { json: { estimatedTokens: 3 } })],
    ["a timeout", (s: StubService) => s.on("POST /assemble", { hang: true })],
  ] as const) {
    test(`assemble passes the host's messages through on ${name}`, async () => {
      setup(service);
      const { engine, log } = engineFor(service.url, { timeoutMs: 150 });
      const params = prePromptParams();
      const started = Date.now();
      const result = await engine.assemble(params);
      assert.ok(Date.now() - started < 2000);
      assert.equal(result.messages, params.messages);
      assert.ok(result.estimatedTokens > 0);
      assert.ok(log.lines.some((l) => l.level === "warn" && l.message.includes("outcome=passthrough")));
    });
  }

  test("assemble passes through when reading the host's parameters throws", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    const { engine } = engineFor(service.url);
    const params = {
      ...prePromptParams(),
      get availableTools(): Set<string> {
        throw new Error("tools are not ready");
      },
    };
    const result = await engine.assemble(params);
    assert.equal(result.messages, params.messages);
    assert.equal(service.received.length, 0);
  });

  test("assemble passes through when the service is unreachable", async () => {
    const { engine } = engineFor(await closedPortUrl());
    const params = toolLoopParams();
    const result = await engine.assemble(params);
    assert.equal(result.messages, params.messages);
  });

  test("commitTurn sends this turn, the budget and the anchors, never the store path or runtimeContext", async () => {
    service.on("POST /commit-turn", { json: { ok: true, status: "committed", ingested: 2 } });
    const { engine } = engineFor(service.url);
    const result = await engine.commitTurn(commitTurnParams({ isHeartbeat: true }));
    assert.deepEqual(result, { status: "committed" });
    const [{ json, raw }] = service.received;
    assert.deepEqual(json, {
      sessionId: "s-1",
      sessionKey: "agent:main:e2e",
      agentId: "main",
      advancementKey: "adv-1",
      messages: [userMessage, assistantMessage],
      isHeartbeat: true,
      tokenBudget: 32000,
      admission: { entryId: "entry-user", rawSeq: 4, logicalTurnId: "adv-1", generation: "gen-1" },
      terminal: { entryId: "entry-assistant", rawSeq: 5 },
    });
    assertClean(raw, json);
  });

  test("commitTurn maps a retried key to duplicate", async () => {
    service.on("POST /commit-turn", { json: { ok: true, status: "duplicate", ingested: 0 } });
    const { engine } = engineFor(service.url);
    assert.deepEqual(await engine.commitTurn(commitTurnParams()), { status: "duplicate" });
  });

  test("commitTurn throws on a transport error so the host's outbox keeps the turn", async () => {
    const { engine } = engineFor(await closedPortUrl());
    await assert.rejects(engine.commitTurn(commitTurnParams()), /commit-turn failed/);
  });

  for (const status of [500, 502, 503, 429]) {
    test(`commitTurn throws on HTTP ${status}`, async () => {
      service.on("POST /commit-turn", { status, json: { error: { code: "UNAVAILABLE", message: "later", details: {} } } });
      const { engine } = engineFor(service.url);
      await assert.rejects(engine.commitTurn(commitTurnParams()), { name: "ServiceError" });
    });
  }

  test("commitTurn throws on a timeout", async () => {
    service.on("POST /commit-turn", { hang: true });
    const { engine } = engineFor(service.url, { timeoutMs: 150 });
    await assert.rejects(engine.commitTurn(commitTurnParams()), /timed out after 150 ms/);
  });

  test("commitTurn throws on an answer without a known status", async () => {
    service.on("POST /commit-turn", { json: { ok: true } });
    const { engine } = engineFor(service.url);
    await assert.rejects(engine.commitTurn(commitTurnParams()), /unknown status/);
  });

  test("commitTurn acknowledges a turn the service refuses as invalid (400), logging an error", async () => {
    service.on("POST /commit-turn", { status: 400, json: { error: { code: "INVALID_ARGUMENT", message: "bad", details: {} } } });
    const { engine, log } = engineFor(service.url);
    assert.deepEqual(await engine.commitTurn(commitTurnParams()), { status: "committed" });
    assert.ok(log.lines.some((l) => l.level === "error" && l.message.includes("INVALID_ARGUMENT")));
  });

  test("compact forwards the trigger and the time limit, and maps the CompactResult", async () => {
    service.on("POST /compact", {
      json: {
        ok: true, compacted: true, reason: "commit_completed",
        result: { summary: "# Working Memory", tokensBefore: 9000, tokensAfter: 448, details: { archiveId: "archive_001" } },
      },
    });
    const { engine } = engineFor(service.url, { compactTimeoutMs: 60000 });
    const result = await engine.compact(compactParams());
    assert.deepEqual(result, {
      ok: true, compacted: true, reason: "commit_completed",
      result: { summary: "# Working Memory", tokensBefore: 9000, tokensAfter: 448, details: { archiveId: "archive_001" } },
    });
    assert.equal("firstKeptEntryId" in result.result!, false); // absent stays absent
    const [{ json, raw }] = service.received;
    assert.deepEqual(json, {
      sessionId: "s-1", sessionKey: "agent:main:e2e", agentId: "main", tokenBudget: 32000,
      currentTokenCount: 9000, compactionTarget: "budget", force: true, trigger: "overflow", timeoutMs: 55000,
    });
    assertClean(raw, json);
  });

  test("compact passes firstKeptEntryId through when the service gives one; manual trigger", async () => {
    service.on("POST /compact", {
      json: { ok: true, compacted: true, reason: "commit_completed", result: { tokensBefore: 10, tokensAfter: 5, firstKeptEntryId: "entry-9" } },
    });
    const { engine } = engineFor(service.url);
    const rc = runtimeContext({ trigger: "manual", forceReason: "manual" });
    const result = await engine.compact(compactParams({ runtimeContext: rc, compactionTarget: "threshold", currentTokenCount: undefined }));
    assert.equal(result.result?.firstKeptEntryId, "entry-9");
    assert.equal(service.received[0].json.trigger, "manual");
    assert.equal("currentTokenCount" in service.received[0].json, false);
  });

  for (const [name, setup] of [
    ["HTTP 500", (s: StubService) => s.on("POST /compact", { status: 500, json: { error: { code: "INTERNAL", message: "x", details: {} } } })],
    ["HTTP 503", (s: StubService) => s.on("POST /compact", { status: 503, json: { error: { code: "UNAVAILABLE", message: "x", details: {} } } })],
  ] as const) {
    test(`compact answers ok:false on ${name}, never throws`, async () => {
      setup(service);
      const { engine } = engineFor(service.url);
      const result = await engine.compact(compactParams());
      assert.equal(result.ok, false);
      assert.equal(result.compacted, false);
      assert.match(result.reason!, /service_error/);
    });
  }

  test("compact answers ok:false when the service is unreachable", async () => {
    const { engine } = engineFor(await closedPortUrl());
    const result = await engine.compact(compactParams());
    assert.deepEqual([result.ok, result.compacted], [false, false]);
  });

  test("compact stops waiting when the host aborts, and cancels the request", async () => {
    service.on("POST /compact", { hang: true });
    const { engine } = engineFor(service.url);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("run aborted")), 100);
    const result = await engine.compact(compactParams({ abortSignal: controller.signal }));
    assert.ok(Date.now() - started < 2000, "compact did not honour the abort signal");
    assert.deepEqual(result, { ok: false, compacted: false, reason: "aborted" });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(service.aborted, 1, "the HTTP request was not cancelled");
  });

  test("compact honours runtimeContext.abortSignal when there is no top-level signal", async () => {
    service.on("POST /compact", { hang: true });
    const { engine } = engineFor(service.url);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = await engine.compact(compactParams({
      abortSignal: undefined,
      runtimeContext: runtimeContext({ trigger: "manual", abortSignal: controller.signal }),
    }));
    assert.equal(result.reason, "aborted");
  });

  test("compact answers ok:false when reading the host's parameters throws", async () => {
    const { engine } = engineFor(service.url);
    const params = {
      ...compactParams(),
      get runtimeContext(): unknown {
        throw new Error("gone");
      },
    };
    const result = await engine.compact(params);
    assert.deepEqual([result.ok, result.compacted], [false, false]);
  });

  test("compact with an already aborted signal sends nothing", async () => {
    const { engine } = engineFor(service.url);
    const controller = new AbortController();
    controller.abort();
    const result = await engine.compact(compactParams({ abortSignal: controller.signal }));
    assert.equal(result.reason, "aborted");
    assert.equal(service.received.length, 0);
  });

  test("compact gives up after compactTimeoutMs", async () => {
    service.on("POST /compact", { hang: true });
    const { engine } = engineFor(service.url, { compactTimeoutMs: 1000 });
    const started = Date.now();
    const result = await engine.compact(compactParams());
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 3000, `elapsed ${elapsed} ms`);
    assert.equal(result.ok, false);
    assert.match(result.reason!, /timed out after 1000 ms/);
    assert.equal(service.received[0].json.timeoutMs, 900); // the service is told to answer first
  });

  test("afterTurn (older hosts) posts the snapshot and never throws", async () => {
    service.on("POST /after-turn", { json: { ok: true, ingested: 2 } });
    const { engine } = engineFor(service.url);
    await engine.afterTurn({
      sessionId: "s-1", sessionKey: "agent:main:e2e", sessionFile: "agent:main:e2e",
      messages: [userMessage, assistantMessage], prePromptMessageCount: 0, tokenBudget: 32000,
      runtimeContext: runtimeContext(), runtimeSettings: {}, isHeartbeat: false,
    });
    const [{ json, raw }] = service.received;
    assert.deepEqual(json, {
      sessionId: "s-1", sessionKey: "agent:main:e2e", messages: [userMessage, assistantMessage],
      prePromptMessageCount: 0, isHeartbeat: false, tokenBudget: 32000,
    });
    assertClean(raw, json);
    const down = engineFor(await closedPortUrl()).engine;
    await down.afterTurn({ sessionId: "s-1", messages: [userMessage], prePromptMessageCount: 0 });
  });

  test("bootstrap and maintain are local no-ops", async () => {
    const { engine } = engineFor(service.url);
    const b = await engine.bootstrap({ sessionId: "s-1", sessionFile: "agent:main:e2e", runtimeContext: runtimeContext() });
    const m = await engine.maintain({ sessionId: "s-1", sessionFile: "agent:main:e2e", runtimeContext: runtimeContext() });
    assert.equal(b.bootstrapped, false);
    assert.deepEqual({ ...m, reason: undefined }, { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: undefined });
    assert.equal(service.received.length, 0);
  });

  test("apiKey is sent as a bearer token, and only when configured", async () => {
    service.on("POST /assemble", { json: assembleAnswer });
    await engineFor(service.url, { apiKey: "ce-key-1" }).engine.assemble(prePromptParams());
    await engineFor(service.url).engine.assemble(prePromptParams());
    assert.equal(service.received[0].headers.authorization, "Bearer ce-key-1");
    assert.equal(service.received[1].headers.authorization, undefined);
  });
});
