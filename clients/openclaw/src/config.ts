// The plugin's configuration (plugins.entries.context-engine.config), with defaults.
// The manifest's configSchema is the strict contract the host validates; this
// module only normalises what the host hands over.

export const DEFAULT_TIMEOUT_MS = 10_000;
// Below the host's compaction safety timeout (180 s), so the plugin answers
// `ok: false` before the host gives up on the call.
export const DEFAULT_COMPACT_TIMEOUT_MS = 150_000;
// An assemble sends only the host's newest messages: the pre-prompt service reconciles from the
// newest back and stops after a run of 16 it holds (it asks for the whole history when they do
// not reach that far, as always below 16); the tool loop reads only the end. 0 sends the whole
// history every time.
export const DEFAULT_ASSEMBLE_TAIL_MESSAGES = 64;

export type AgentExperienceConfig = {
  enabled?: boolean;
  recallLimit?: number;
  scoreThreshold?: number;
  maxInjectedChars?: number;
  minQueryChars?: number;
};

export type PluginConfig = {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  compactTimeoutMs: number;
  assembleTailMessages: number;
  autoRecall?: boolean;
  agentExperience?: AgentExperienceConfig;
};

export class ConfigError extends Error {}

export function resolveConfig(raw: unknown): PluginConfig {
  const cfg = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  const baseUrl = typeof cfg.baseUrl === "string" ? cfg.baseUrl.trim().replace(/\/+$/, "") : "";
  if (!baseUrl) throw new ConfigError("context-engine: config.baseUrl is required");
  try {
    const url = new URL(baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new ConfigError(`context-engine: config.baseUrl is not an http(s) URL: ${baseUrl}`);
  }
  const out: PluginConfig = {
    baseUrl,
    timeoutMs: positiveInt(cfg.timeoutMs, DEFAULT_TIMEOUT_MS),
    compactTimeoutMs: positiveInt(cfg.compactTimeoutMs, DEFAULT_COMPACT_TIMEOUT_MS),
    assembleTailMessages: tailSize(cfg.assembleTailMessages),
  };
  if (typeof cfg.apiKey === "string" && cfg.apiKey) out.apiKey = cfg.apiKey;
  if (typeof cfg.autoRecall === "boolean") out.autoRecall = cfg.autoRecall;
  if (cfg.agentExperience && typeof cfg.agentExperience === "object") {
    const ae = cfg.agentExperience as Record<string, unknown>;
    const experience: AgentExperienceConfig = {};
    if (typeof ae.enabled === "boolean") experience.enabled = ae.enabled;
    for (const key of ["recallLimit", "scoreThreshold", "maxInjectedChars", "minQueryChars"] as const) {
      const value = ae[key];
      if (typeof value === "number" && Number.isFinite(value) && value >= 0) experience[key] = value;
    }
    if (Object.keys(experience).length > 0) out.agentExperience = experience;
  }
  return out;
}

function tailSize(value: unknown): number {
  return value === 0 ? 0 : positiveInt(value, DEFAULT_ASSEMBLE_TAIL_MESSAGES);
}

function positiveInt(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

/** Per-request recall options for /assemble, from the config (absent keys: the service decides). */
export function assembleOptions(config: PluginConfig): Record<string, unknown> | undefined {
  const options: Record<string, unknown> = {};
  if (config.autoRecall !== undefined) options.autoRecall = config.autoRecall;
  if (config.agentExperience) options.agentExperience = { ...config.agentExperience };
  return Object.keys(options).length > 0 ? options : undefined;
}
