import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, beforeEach, describe, test } from "node:test";

import plugin from "../index.ts";
import { createClient } from "../src/client.ts";
import { resolveConfig } from "../src/config.ts";
import { assemblePhase, createContextEngine } from "../src/engine.ts";
import { isFailedAttemptReplay, outgoingMessages, summaryApart, summaryText } from "../src/history.ts";
import { HookWatch, hostTraits, parseRelease } from "../src/host.ts";
import { PromptMemory } from "../src/prompt-memory.ts";
import { PLUGIN_VERSION, versionHeaders } from "../src/version.ts";
import { assistantMessage, prePromptParams, toolLoopParams, userMessage } from "./host-params.ts";
import { StubService, closedPortUrl, silentLogger } from "./stub-service.ts";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const GUIDE = "## Session Context Guide\n\nThe conversation history has two layers";

function engineFor(url: string, hostVersion: string, memory?: PromptMemory) {
  const config = resolveConfig({ baseUrl: url });
  const log = silentLogger();
  const client = createClient(config, fetch, versionHeaders(hostVersion));
  const watch = new HookWatch(log.logger, hostVersion);
  return { engine: createContextEngine({ config, client, logger: log.logger, hostVersion, watch, memory }), log };
}

describe("host releases", () => {
  test("versions: commitTurn from 2026.8.1, supported from 2026.7", () => {
    assert.deepEqual(parseRelease("2026.8.1-beta.2"), [2026, 8, 1]);
    assert.equal(parseRelease("unknown"), undefined);
    assert.deepEqual(hostTraits("2026.9.6"), { commitsTurns: true, unsupported: false });
    assert.deepEqual(hostTraits("2026.8.1"), { commitsTurns: true, unsupported: false });
    assert.deepEqual(hostTraits("2026.7.35"), { commitsTurns: false, unsupported: false });
    assert.deepEqual(hostTraits("2026.6.35"), { commitsTurns: false, unsupported: true });
    assert.deepEqual(hostTraits("2027.1.0"), { commitsTurns: true, unsupported: false });
    assert.deepEqual(hostTraits(undefined), { unsupported: false });
  });

  test("the phase: runtimeContext marks pre_prompt; before commitTurn, prompt or availableTools do", () => {
    const loop = toolLoopParams();
    assert.equal(assemblePhase(prePromptParams(), true), "pre_prompt");
    assert.equal(assemblePhase(loop, true), "tool_loop");
    assert.equal(assemblePhase(loop, undefined), "tool_loop");
    // 2026.7's pre-prompt call: prompt and tools, no runtimeContext; its tool loop: neither
    const { runtimeContext: _rc, ...legacyPre } = prePromptParams();
    assert.equal(assemblePhase(legacyPre, false), "pre_prompt");
    assert.equal(assemblePhase({ sessionId: "s", messages: [], tokenBudget: 1 }, false), "tool_loop");
  });

  test("before commitTurn, user messages leave without their timestamp; otherwise unchanged", () => {
    const sent = outgoingMessages([userMessage, assistantMessage], false) as any[];
    assert.equal("timestamp" in sent[0], false);
    assert.equal(sent[0].content, userMessage.content);
    assert.equal(sent[1].timestamp, assistantMessage.timestamp);
    assert.deepEqual(outgoingMessages([userMessage], true), [userMessage]);
    assert.deepEqual(outgoingMessages([userMessage], undefined), [userMessage]);
  });

  test("a replayed failed attempt is recognised by the host's placeholder and errorMessage", () => {
    const replay = {
      role: "assistant",
      content: [{ type: "text", text: "[assistant turn failed before producing content]" }, { type: "text", text: "ECHO" }],
      errorMessage: "400 maximum context length",
      timestamp: 1,
    };
    assert.equal(isFailedAttemptReplay(replay), true);
    assert.equal(isFailedAttemptReplay({ ...replay, errorMessage: undefined }), false);
    assert.equal(isFailedAttemptReplay({ ...replay, role: "user" }), false);
    assert.equal(isFailedAttemptReplay(assistantMessage), false);
  });

  test("the summary is kept apart from the user message the service merged it with", () => {
    const summary = { type: "text", text: "[Session History Summary]\n# Working Memory" };
    const said = { type: "text", text: "OVERFLOW-ONCE" };
    const merged = { role: "user", content: [summary, said], timestamp: 5 };
    assert.deepEqual(summaryApart([merged, assistantMessage]), [
      { role: "user", content: [summary], timestamp: 5 },
      { role: "user", content: [said], timestamp: 5 },
      assistantMessage,
    ]);
    const alone = [{ role: "user", content: [summary] }, assistantMessage];
    assert.equal(summaryApart(alone), alone);
    const twoBlocks = [{ role: "user", content: [said, summary] }];
    assert.equal(summaryApart(twoBlocks), twoBlocks); // not a summary first: as it is
  });

  test("a summary keeps the timestamp it first had until its text changes", () => {
    const memory = new PromptMemory();
    const summary = (text: string, timestamp?: number) => ({ role: "user", content: `[Session History Summary]\n${text}`, timestamp });
    assert.deepEqual(memory.pinSummary("k", [summary("a", 1)], summaryText), [summary("a", 1)]);
    assert.deepEqual(memory.pinSummary("k", [summary("a", 7), assistantMessage], summaryText), [summary("a", 1), assistantMessage]);
    assert.deepEqual(memory.pinSummary("k", [summary("b", 7)], summaryText), [summary("b", 7)]); // a new summary
    assert.deepEqual(memory.pinSummary("k", [userMessage], summaryText), [userMessage]);
    const undated = new PromptMemory();
    undated.pinSummary("k", [{ role: "user", content: "[Session History Summary]\nx" }], summaryText);
    assert.deepEqual(undated.pinSummary("k", [summary("x", 3)], summaryText), [{ role: "user", content: "[Session History Summary]\nx" }]);
  });

  test("the prompt memory gives the last answer with the host's newer messages, or the host's own", () => {
    const memory = new PromptMemory();
    const host = [userMessage, assistantMessage];
    const built = [{ role: "user", content: "[Session History Summary]" }, assistantMessage];
    memory.remember("k", host, built, GUIDE);
    const later = [...host, { role: "user", content: "next" }];
    assert.deepEqual(memory.fallback("k", later), {
      messages: [...built, later[2]], reused: true, systemPromptAddition: GUIDE,
    });
    // the host's history no longer starts as it did: its own messages, the same addition
    assert.deepEqual(memory.fallback("k", [assistantMessage]), {
      messages: [assistantMessage], reused: false, systemPromptAddition: GUIDE,
    });
    assert.deepEqual(memory.fallback("other", later), { messages: later, reused: false });
  });
});

describe("engine per host release", () => {
  const service = new StubService();
  before(() => service.start());
  after(() => service.stop());
  beforeEach(() => {
    service.received.length = 0;
  });

  test("every request says the plugin's version (package.json) and the host's", async () => {
    service.on("POST /assemble", { json: { messages: [], estimatedTokens: 0 } });
    await engineFor(service.url, "2026.9.6").engine.assemble(prePromptParams());
    assert.equal(PLUGIN_VERSION, pkg.version);
    assert.equal(service.received[0].headers["x-plugin-version"], pkg.version);
    assert.equal(service.received[0].headers["x-host-version"], "openclaw/2026.9.6");
  });

  test("a host with commitTurn: afterTurn and ingest store nothing", async () => {
    const { engine } = engineFor(service.url, "2026.8.2");
    await engine.afterTurn({ sessionId: "s-1", messages: [userMessage], prePromptMessageCount: 0 });
    await engine.ingest({ sessionId: "s-1", message: userMessage });
    await engine.ingestBatch({ sessionId: "s-1", messages: [userMessage] });
    assert.equal(service.received.length, 0);
  });

  test("a host before commitTurn: afterTurn posts the turn, user timestamps left out", async () => {
    service.on("POST /after-turn", { json: { ok: true, ingested: 2 } });
    await engineFor(service.url, "2026.7.35").engine.afterTurn({
      sessionId: "s-1", messages: [userMessage, assistantMessage], prePromptMessageCount: 0,
    });
    const [{ json }] = service.received;
    assert.equal(json.messages.length, 2);
    assert.equal("timestamp" in json.messages[0], false);
  });

  test("a pre-prompt assemble leaves a failed attempt's replay out of what it sends", async () => {
    service.on("POST /assemble", { json: { messages: [userMessage], estimatedTokens: 1 } });
    const replay = { ...assistantMessage, errorMessage: "400", content: [{ type: "text", text: "[assistant turn failed before producing content]" }] };
    await engineFor(service.url, "2026.8.2").engine.assemble(prePromptParams([userMessage, replay, assistantMessage]));
    assert.equal(service.received[0].json.messages.length, 2);
  });

  test("the service down: the pre-prompt keeps its last guide and history; tool loop passes through", async () => {
    const memory = new PromptMemory();
    const built = [{ role: "user", content: "[Session History Summary]" }, assistantMessage];
    service.on("POST /assemble", { json: { messages: built, estimatedTokens: 9, systemPromptAddition: GUIDE } });
    const up = await engineFor(service.url, "2026.9.6", memory).engine.assemble(prePromptParams());
    assert.equal(up.systemPromptAddition, GUIDE);
    const down = engineFor(await closedPortUrl(), "2026.9.6", memory).engine;
    const newer = [userMessage, assistantMessage, { role: "user", content: "offline" }];
    const kept = await down.assemble(prePromptParams(newer));
    assert.deepEqual(kept.messages, [...built, newer[2]]);
    assert.equal(kept.systemPromptAddition, GUIDE);
    const loop = await down.assemble(toolLoopParams(newer));
    assert.deepEqual(loop.messages, newer);
    assert.equal(loop.systemPromptAddition, undefined);
  });

  test("a passthrough answer keeps the guide it carries", async () => {
    service.on("POST /assemble", {
      json: { messages: [], estimatedTokens: 0, systemPromptAddition: GUIDE, diagnostics: { mode: "passthrough", reason: "no_stored_context" } },
    });
    const result = await engineFor(service.url, "2026.9.6").engine.assemble(prePromptParams());
    assert.deepEqual(result.messages, [userMessage, assistantMessage]);
    assert.equal(result.systemPromptAddition, GUIDE);
  });

  test("assembling twice without a turn hook is said once, in one line", async () => {
    service.on("POST /assemble", { json: { messages: [], estimatedTokens: 0 } });
    const { engine, log } = engineFor(service.url, "2026.9.6");
    for (let i = 0; i < 3; i++) await engine.assemble(prePromptParams());
    const lines = log.lines.filter((l) => l.level === "error");
    assert.equal(lines.length, 1);
    assert.match(lines[0].message, /OpenClaw 2026\.9\.6 assembled session agent:main:e2e again without calling commitTurn or afterTurn/);
  });
});

describe("registration per host release", () => {
  function api(version: string) {
    const log = silentLogger();
    const engines: unknown[] = [];
    return {
      log,
      engines,
      api: {
        registrationMode: "full",
        runtime: { version },
        pluginConfig: { baseUrl: "http://127.0.0.1:9" },
        logger: log.logger,
        registerContextEngine: (_id: string, factory: unknown) => engines.push(factory),
      },
    };
  }

  test("a release older than the oldest supported one is refused with a clear line", () => {
    const run = api("2026.6.35");
    plugin.register(run.api as any);
    assert.equal(run.engines.length, 0);
    assert.ok(run.log.lines.some((l) => l.level === "error" && /OpenClaw 2026\.6\.35 is older than 2026\.7/.test(l.message)));
  });

  test("a release before commitTurn registers, and says how turns are stored", () => {
    const run = api("2026.7.35");
    plugin.register(run.api as any);
    assert.equal(run.engines.length, 1);
    assert.ok(run.log.lines.some((l) => l.level === "info" && /has no commitTurn/.test(l.message)));
  });
});
