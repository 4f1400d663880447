// OpenClaw plugin entry: registers the `context-engine` context engine and its agent tools.
// The host loads this TypeScript file directly (no build step) and may call
// register() several times per process (full and discovery registrations), so it
// keeps no state between calls.

import { createClient } from "./src/client.ts";
import { ConfigError, resolveConfig } from "./src/config.ts";
import { ENGINE_ID, type Logger, createContextEngine } from "./src/engine.ts";
import { TOOL_NAMES, type ToolContext, createTools } from "./src/tools.ts";
import { hostVersionOf, versionHeaders } from "./src/version.ts";

type PluginApi = {
  pluginConfig?: unknown;
  runtime?: { version?: unknown };
  logger?: Logger;
  registerContextEngine: (id: string, factory: (ctx: unknown) => unknown) => unknown;
  registerTool?: (factory: (ctx: ToolContext) => unknown, opts?: { names?: string[] }) => unknown;
};

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
    const client = createClient(config, fetch, versionHeaders(hostVersion));
    api.registerContextEngine(ENGINE_ID, () => createContextEngine({ config, client, logger, hostVersion }));
    api.registerTool?.(
      (ctx: ToolContext) =>
        createTools(client, { sessionId: ctx?.sessionId, sessionKey: ctx?.sessionKey, agentId: ctx?.agentId }),
      { names: [...TOOL_NAMES] },
    );
  },
};

export default plugin;
