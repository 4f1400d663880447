// OpenClaw plugin entry: registers the `context-engine` context engine and its agent tools.
// The host loads this TypeScript file directly (no build step) and may call
// register() several times per process (full and discovery registrations): every call
// registers the same engine; only the hook watch and the prompt memory are kept per process.

import { createClient } from "./src/client.ts";
import { ConfigError, resolveConfig } from "./src/config.ts";
import { ENGINE_ID, type Logger, createContextEngine } from "./src/engine.ts";
import { HookWatch, OLDEST_SUPPORTED_RELEASE, hostTraits } from "./src/host.ts";
import { PromptMemory } from "./src/prompt-memory.ts";
import { TOOL_NAMES, type ToolContext, createTools } from "./src/tools.ts";
import { hostVersionOf, versionHeaders } from "./src/version.ts";

type PluginApi = {
  pluginConfig?: unknown;
  runtime?: { version?: unknown };
  registrationMode?: string;
  logger?: Logger;
  registerContextEngine: (id: string, factory: (ctx: unknown) => unknown) => unknown;
  registerTool?: (factory: (ctx: ToolContext) => unknown, opts?: { names?: string[] }) => unknown;
};

// The process's watch on the hooks the host calls and its memory of the last prompts: the host
// registers the plugin several times per process and makes an engine per turn.
let shared: { watch: HookWatch; memory: PromptMemory } | undefined;

const plugin = {
  id: "context-engine",
  name: "context-engine",
  description:
    "Lossless, bounded context for OpenClaw agents: forwards the context-engine hooks to a " +
    "context-engine service and adds archive and memory tools.",
  register(api: PluginApi) {
    const logger: Logger = api.logger ?? {};
    let config;
    try {
      config = resolveConfig(api.pluginConfig);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      logger.error?.(`${error.message}; the context engine is not registered`);
      return;
    }
    const hostVersion = hostVersionOf(api);
    const traits = hostTraits(hostVersion);
    if (traits.unsupported) {
      logger.error?.(
        `context-engine: OpenClaw ${hostVersion} is older than ${OLDEST_SUPPORTED_RELEASE.slice(0, 2).join(".")}, ` +
          "the oldest release this plugin supports; the context engine is not registered (upgrade OpenClaw)",
      );
      return;
    }
    if (typeof api.registerContextEngine !== "function") {
      logger.error?.(
        `context-engine: OpenClaw ${hostVersion} offers no registerContextEngine; the context engine is not registered`,
      );
      return;
    }
    if (traits.commitsTurns === false && api.registrationMode === "full") {
      logger.info?.(
        `context-engine: OpenClaw ${hostVersion} has no commitTurn: turns are stored through afterTurn, ` +
          "and a turn whose afterTurn failed is stored from the next pre-prompt assemble's history",
      );
    }
    const client = createClient(config, fetch, versionHeaders(hostVersion));
    // One of each per process, whichever registration's factory the host calls (one per turn).
    shared ??= { watch: new HookWatch(logger, hostVersion), memory: new PromptMemory() };
    const { watch, memory } = shared;
    api.registerContextEngine(ENGINE_ID, () =>
      createContextEngine({ config, client, logger, hostVersion, watch, memory }),
    );
    api.registerTool?.(
      (ctx: ToolContext) =>
        createTools(client, { sessionId: ctx?.sessionId, sessionKey: ctx?.sessionKey, agentId: ctx?.agentId }),
      { names: [...TOOL_NAMES] },
    );
  },
};

export default plugin;
