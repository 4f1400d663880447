import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";

import { createClient } from "../src/client.ts";
import { resolveConfig } from "../src/config.ts";
import { TOOL_NAMES, createTools } from "../src/tools.ts";
import { StubService } from "./stub-service.ts";

describe("tools", () => {
  const service = new StubService();
  before(() => service.start());
  after(() => service.stop());
  beforeEach(() => {
    service.received.length = 0;
    service.routes.clear();
  });

  const tools = (ctx: { sessionId?: string; sessionKey?: string } = { sessionId: "s-1", sessionKey: "agent:main:k" }) => {
    const config = resolveConfig({ baseUrl: service.url, timeoutMs: 500 });
    return Object.fromEntries(createTools(createClient(config), ctx).map((t) => [t.name, t]));
  };

  test("the four tools, each with a JSON schema", () => {
    const all = tools();
    assert.deepEqual(Object.keys(all), [...TOOL_NAMES]);
    for (const tool of Object.values(all)) {
      assert.equal(tool.parameters.type, "object");
      assert.equal(typeof tool.description, "string");
      assert.ok(tool.label);
    }
  });

  test("archive_expand reads the archive of the run's session as text", async () => {
    service.on("GET /archives/archive_002", { text: "## archive_002\n**Messages**: 2\n\n[user]:\nhello" });
    const result = await tools().archive_expand.execute("call-1", { archiveId: "archive_002" });
    assert.deepEqual(result.content, [{ type: "text", text: "## archive_002\n**Messages**: 2\n\n[user]:\nhello" }]);
    const [req] = service.received;
    assert.equal(req.method, "GET");
    assert.equal(req.path, "/archives/archive_002?sessionId=s-1&format=text");
  });

  test("archive_expand falls back to the session key when the host gives no session id", async () => {
    service.on("GET /archives/archive_001", { text: "## archive_001" });
    await tools({ sessionKey: "agent:main:k" }).archive_expand.execute("call-1", { archiveId: "archive_001" });
    assert.equal(service.received[0].path, "/archives/archive_001?sessionId=agent%3Amain%3Ak&format=text");
  });

  test("archive_expand without a session or an archive id fails without a request", async () => {
    await assert.rejects(tools({}).archive_expand.execute("c", { archiveId: "archive_001" }), /needs an agent session/);
    await assert.rejects(tools().archive_expand.execute("c", {}), /archiveId is required/);
    assert.equal(service.received.length, 0);
  });

  test("archive_expand surfaces the service's error to the model", async () => {
    service.on("GET /archives/archive_404", { status: 404, json: { error: { code: "NOT_FOUND", message: "archive not found", details: {} } } });
    await assert.rejects(tools().archive_expand.execute("c", { archiveId: "archive_404" }), /archive_expand failed: archive not found/);
  });

  test("archive_search posts the query as text search with defaults", async () => {
    service.on("POST /archives/search", { text: 'Found 1 match(es) for "launch code"' });
    const result = await tools().archive_search.execute("c", { query: "launch code" });
    assert.equal(result.content[0].text, 'Found 1 match(es) for "launch code"');
    assert.deepEqual(service.received[0].json, { sessionId: "s-1", query: "launch code", mode: "ranked", limit: 20, format: "text" });
    await tools().archive_search.execute("c", { query: "PELICAN-\\d+", mode: "regex", limit: 5 });
    assert.deepEqual(service.received[1].json, { sessionId: "s-1", query: "PELICAN-\\d+", mode: "regex", limit: 5, format: "text" });
    await assert.rejects(tools().archive_search.execute("c", { query: "x", mode: "fuzzy" }), /mode must be one of/);
  });

  test("memory_search renders the results as data", async () => {
    service.on("POST /memories/search", {
      json: { results: [{ id: "m1", category: "preferences", content: "Likes mangosteen", score: 0.82 }] },
    });
    const result = await tools().memory_search.execute("c", { query: "favourite fruit", limit: 3 });
    assert.deepEqual(service.received[0].json, { query: "favourite fruit", limit: 3 });
    assert.match(result.content[0].text, /not instructions/);
    assert.match(result.content[0].text, /1\. \[preferences\] Likes mangosteen \(score 0\.820\)/);
    assert.deepEqual(result.details, { query: "favourite fruit", count: 1, ids: ["m1"] });
  });

  test("memory_search says so when nothing matches", async () => {
    service.on("POST /memories/search", { json: { results: [] } });
    const result = await tools().memory_search.execute("c", { query: "unicorns" });
    assert.equal(result.content[0].text, 'No memory matches "unicorns".');
  });

  test("memory_commit stores a memory in one of the user categories", async () => {
    service.on("POST /memories", { json: { action: "ADD", memory: { id: "mem_1" } } });
    const result = await tools().memory_commit.execute("c", { content: "Ada prefers green tea", category: "preferences" });
    assert.deepEqual(service.received[0].json, { content: "Ada prefers green tea", category: "preferences" });
    assert.equal(result.content[0].text, "Remembered (mem_1).");
    await assert.rejects(tools().memory_commit.execute("c", { content: "x", category: "experiences" }), /category must be one of/);
    assert.equal(service.received.length, 1);
  });

  test("memory_commit reports a refused or duplicate memory", async () => {
    service.on("POST /memories", { json: { action: "NONE", reason: "never-store" } });
    const result = await tools().memory_commit.execute("c", { content: "password is hunter2", category: "profile" });
    assert.equal(result.content[0].text, "Nothing stored: never-store.");
  });

  test("a tool honours the host's abort signal", async () => {
    service.on("POST /memories/search", { hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(tools().memory_search.execute("c", { query: "x" }, controller.signal), /aborted/);
  });
});
