// Hook parameters shaped like the ones OpenClaw 2026.9 passes, including the live values and
// secrets that must never reach the service.

export const PROVIDER_SECRET = "sk-provider-secret-do-not-forward";

export const userMessage = {
  role: "user",
  content: "Hello, my name is Ada. Remember the word ZEBRA.",
  timestamp: 1795416071785,
  idempotencyKey: "run-1:user",
  __openclaw: { senderIsOwner: true },
};

export const assistantMessage = {
  role: "assistant",
  content: [{ type: "text", text: "ECHO: Hello" }],
  api: "openai-completions",
  provider: "stub",
  model: "stub-1",
  usage: { input: 101, output: 10, totalTokens: 111 },
  stopReason: "stop",
  timestamp: 1795416083298,
  __openclaw: { runId: "run-1" },
};

/** A runtimeContext as the host builds it: JSON data mixed with functions, signals and secrets. */
export function runtimeContext(extra: Record<string, unknown> = {}) {
  return {
    sessionKey: "agent:main:e2e",
    workspaceDir: "/home/demo/workspace",
    provider: "stub",
    model: "stub-1",
    tokenBudget: 32000,
    config: { models: { providers: { stub: { apiKey: PROVIDER_SECRET, baseUrl: "http://127.0.0.1:1/v1" } } } },
    llm: { complete: async () => ({ text: "" }) },
    skillsSnapshot: { skills: ["a"] },
    sessionEntry: { sessionId: "s-1", secretish: PROVIDER_SECRET },
    abortSignal: new AbortController().signal,
    onCompactionHookMessages: () => {},
    rewriteTranscriptEntries: async () => ({ changed: false }),
    ...extra,
  };
}

export const runtimeSettings = {
  schemaVersion: 1,
  runtime: { host: "openclaw", mode: "normal", harnessId: null, runtimeId: null },
  limits: { promptTokenBudget: 12156, maxOutputTokens: 8000 },
};

export const sessionTarget = {
  agentId: "main",
  sessionId: "s-1",
  sessionKey: "agent:main:e2e",
  storePath: "/home/demo/state/agents/main/agent/openclaw-agent.sqlite",
};

/** The pre-prompt assemble (assembleHarnessContextEngine): has the key runtimeContext, undefined. */
export function prePromptParams(messages: unknown[] = [userMessage, assistantMessage]) {
  return {
    sessionId: "s-1",
    sessionKey: "agent:main:e2e",
    messages,
    tokenBudget: 12156,
    availableTools: new Set(["write", "read", "exec"]),
    citationsMode: "auto",
    model: "stub-1",
    runtimeSettings,
    runtimeContext: undefined,
    prompt: "what did I ask you to remember?",
  };
}

/** The tool-loop assemble (the loop hook): no runtimeContext key at all. */
export function toolLoopParams(messages: unknown[] = [userMessage, assistantMessage]) {
  return {
    sessionId: "s-1",
    sessionKey: "agent:main:e2e",
    messages,
    prompt: "what did I ask you to remember?",
    get availableTools() {
      return new Set(["read", "exec"]);
    },
    tokenBudget: 31956,
    model: "stub-1",
    runtimeSettings,
  };
}

export function commitTurnParams(extra: Record<string, unknown> = {}) {
  return {
    advancementKey: "adv-1",
    admission: {
      ...sessionTarget,
      generation: "gen-1",
      entryId: "entry-user",
      rawSeq: 4,
      effectiveParentId: "entry-parent",
      activeMessagePosition: 0,
      idempotencyKey: "run-1:user",
      logicalTurnId: "adv-1",
      role: "user",
    },
    terminal: { ...sessionTarget, generation: "gen-1", entryId: "entry-assistant", rawSeq: 5, effectiveParentId: "entry-user" },
    messages: [userMessage, assistantMessage],
    sessionId: "s-1",
    sessionKey: "agent:main:e2e",
    sessionTarget,
    isHeartbeat: false,
    runtimeContext: runtimeContext(),
    runtimeSettings,
    ...extra,
  };
}

export function compactParams(extra: Record<string, unknown> = {}) {
  const controller = new AbortController();
  return {
    sessionId: "s-1",
    sessionKey: "agent:main:e2e",
    agentId: "main",
    sessionTarget,
    tokenBudget: 32000,
    currentTokenCount: 9000,
    force: true,
    compactionTarget: "budget",
    customInstructions: undefined,
    runtimeContext: runtimeContext({ trigger: "overflow", attempt: 1, maxAttempts: 3, diagId: "ovf-1", runId: "run-2" }),
    runtimeSettings,
    abortSignal: controller.signal,
    ...extra,
  };
}
