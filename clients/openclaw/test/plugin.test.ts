import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import plugin from "../index.ts";
import { TOOL_NAMES } from "../src/tools.ts";
import { silentLogger } from "./stub-service.ts";

const manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

function fakeApi(pluginConfig: unknown, registrationMode = "full") {
  const engines: { id: string; factory: (ctx: unknown) => any }[] = [];
  const tools: { factory: (ctx: any) => any; opts: any }[] = [];
  const log = silentLogger();
  const api = {
    registrationMode,
    pluginConfig,
    logger: log.logger,
    registerContextEngine: (id: string, factory: (ctx: unknown) => any) => {
      engines.push({ id, factory });
      return undefined; // what 2026.9.6 returns
    },
    registerTool: (factory: (ctx: any) => any, opts: any) => tools.push({ factory, opts }),
  };
  return { api, engines, tools, log };
}

describe("plugin entry", () => {
  test("manifest: id, kind, strict config schema with every key, tools declared", () => {
    assert.equal(manifest.id, "context-engine");
    assert.equal(manifest.kind, "context-engine");
    const schema = manifest.configSchema;
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.required, ["baseUrl"]);
    assert.deepEqual(Object.keys(schema.properties).sort(),
      ["agentExperience", "apiKey", "assembleTailMessages", "autoRecall", "baseUrl", "compactTimeoutMs", "timeoutMs"]);
    assert.equal(schema.properties.agentExperience.additionalProperties, false);
    assert.deepEqual(Object.keys(schema.properties.agentExperience.properties).sort(),
      ["enabled", "maxInjectedChars", "minQueryChars", "recallLimit", "scoreThreshold"]);
    assert.deepEqual(manifest.contracts.tools, [...TOOL_NAMES]);
    assert.equal(pkg.type, "module");
    assert.deepEqual(pkg.openclaw.extensions, ["./index.ts"]);
    assert.equal(plugin.id, manifest.id);
  });

  test("register is idempotent: three registrations give three independent, equal engines", async () => {
    const runs = ["full", "discovery", "discovery"].map((mode) => fakeApi({ baseUrl: "http://127.0.0.1:9/" }, mode));
    for (const run of runs) plugin.register(run.api as any);
    for (const run of runs) {
      assert.equal(run.engines.length, 1);
      assert.equal(run.engines[0].id, "context-engine");
      assert.equal(run.tools.length, 1);
      assert.deepEqual(run.tools[0].opts, { names: [...TOOL_NAMES] });
      const engine = await run.engines[0].factory({ config: {}, agentDir: "/a", workspaceDir: "/w" });
      assert.equal(engine.info.id, "context-engine");
      const created = run.tools[0].factory({ sessionId: "s-1", sessionKey: "agent:main:k" });
      assert.deepEqual(created.map((t: any) => t.name), [...TOOL_NAMES]);
    }
    const [a, b] = await Promise.all(runs.slice(0, 2).map((r) => r.engines[0].factory({})));
    assert.notEqual(a, b);
  });

  test("a config without baseUrl registers nothing and says why", () => {
    const run = fakeApi({});
    plugin.register(run.api as any);
    assert.equal(run.engines.length, 0);
    assert.equal(run.tools.length, 0);
    assert.ok(run.log.lines.some((l) => l.level === "error" && l.message.includes("baseUrl is required")));
  });

  test("a baseUrl that is not http(s) is refused", () => {
    const run = fakeApi({ baseUrl: "ftp://example" });
    plugin.register(run.api as any);
    assert.equal(run.engines.length, 0);
  });
});
