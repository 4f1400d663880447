// The context engine the host calls: each hook maps to one service endpoint.
//
// Failure rules (the host's, see README.md):
// - assemble never throws: on any failure the host's own messages pass through;
// - compact never throws: it answers { ok: false, compacted: false, reason };
// - commitTurn throws on any failure (unreachable, timeout, 5xx, 429, 401, 404, …) so the
//   turn stays in the host's durable outbox and is retried before the next turn, except
//   when the service refuses the turn itself as invalid (400, 413, 422);
// - bootstrap and maintain are local no-ops; afterTurn (older hosts) and ingest log
//   failures and never throw (a throwing lifecycle method makes the host quarantine the engine).

import { type ServiceClient, ServiceError, describe } from "./client.ts";
import { type PluginConfig, assembleOptions } from "./config.ts";
import { bool, compact, estimateTokens, messagesJson, num, str, toolNames } from "./sanitize.ts";
import { isFailedAttemptReplay, outgoingMessages, summaryApart, summaryText } from "./history.ts";
import { type HookWatch, hostTraits } from "./host.ts";
import type { PromptMemory } from "./prompt-memory.ts";
import { PLUGIN_VERSION } from "./version.ts";

export const ENGINE_ID = "context-engine";

export type Logger = {
  debug?: (message: string) => void;
  info?: (message: string) => void;
  warn?: (message: string) => void;
  error?: (message: string) => void;
};

type Params = Record<string, unknown>;
type Phase = "pre_prompt" | "tool_loop";

/** What the host reads from assemble (AssembleResult in the host's types). */
export type AssembleResult = { messages: unknown[]; estimatedTokens: number; systemPromptAddition?: string };
/** CompactResult in the host's types. */
export type CompactResult = { ok: boolean; compacted: boolean; reason?: string; result?: Params };

/** The pre-prompt assemble (assembleHarnessContextEngine) always passes the key
 * `runtimeContext`, possibly undefined; the tool-loop assemble (the host's
 * transformContext loop hook) never has it. A host before commitTurn (`commitsTurns` false)
 * passes no `runtimeContext` at all: there only the pre-prompt call has `prompt` or
 * `availableTools`. */
export function assemblePhase(params: Params, commitsTurns?: boolean): Phase {
  const has = (key: string) => Object.prototype.hasOwnProperty.call(params, key);
  if (has("runtimeContext")) return "pre_prompt";
  if (commitsTurns === false && (params.prompt !== undefined || params.availableTools !== undefined)) {
    return "pre_prompt";
  }
  return "tool_loop";
}

/** The /assemble body: the host's parameters with `messages` (the newest ones when `omitted` > 0). */
function assembleBody(
  config: PluginConfig,
  params: Params,
  phase: Phase,
  messages: unknown[],
  omitted: number,
  commitsTurns?: boolean,
) {
  return compact({
    sessionId: str(params.sessionId),
    sessionKey: str(params.sessionKey),
    agentId: agentIdOf(params),
    phase,
    // The pre-prompt history is read only for turns the service lacks: a failed attempt's replay
    // is not one (the turn's answer arrives with the turn).
    messages: outgoingMessages(
      phase === "pre_prompt" ? messages.filter((m) => !isFailedAttemptReplay(m)) : messages,
      commitsTurns,
    ),
    omittedMessageCount: omitted > 0 ? omitted : undefined,
    tokenBudget: num(params.tokenBudget),
    prompt: typeof params.prompt === "string" ? params.prompt : undefined,
    availableTools: toolNames(params.availableTools),
    model: str(params.model),
    options: assembleOptions(config),
  });
}

/** The reason of a passthrough answer, undefined for an assembled one. */
function passthroughReason(answer: Params): string | undefined {
  const diagnostics = answer.diagnostics && typeof answer.diagnostics === "object" ? (answer.diagnostics as Params) : {};
  return diagnostics.mode === "passthrough" ? (str(diagnostics.reason) ?? "") : undefined;
}

function runtimeContextOf(params: Params): Params {
  const rc = params.runtimeContext;
  return rc && typeof rc === "object" ? (rc as Params) : {};
}

function agentIdOf(params: Params): string | undefined {
  const target = params.sessionTarget && typeof params.sessionTarget === "object" ? (params.sessionTarget as Params) : {};
  return str(params.agentId) ?? str(target.agentId);
}

/** Only these anchor fields leave the process (never storePath). */
function anchor(value: unknown, fields: readonly string[]): Params | undefined {
  if (!value || typeof value !== "object") return undefined;
  const src = value as Params;
  const out: Params = {};
  for (const field of fields) {
    const v = src[field];
    if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) out[field] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const ADMISSION_FIELDS = ["entryId", "rawSeq", "logicalTurnId", "generation"] as const;
const TERMINAL_FIELDS = ["entryId", "rawSeq"] as const;

// 400, 413 and 422 refuse this very turn: retrying cannot help, and a turn that
// stays in the host's outbox makes every later turn of the session run without the engine.
const PERMANENT_COMMIT_STATUSES = new Set([400, 413, 422]);

export type EngineDeps = {
  config: PluginConfig;
  client: ServiceClient;
  logger: Logger;
  /** The host's version (`api.runtime.version`), "unknown" when it does not say. */
  hostVersion?: string;
  /** Shared by the engines of one process: notes which hooks the host calls. */
  watch?: HookWatch;
  /** Shared by the engines of one process: the last pre-prompt answer of each session. */
  memory?: PromptMemory;
  now?: () => number;
};

export function createContextEngine(deps: EngineDeps) {
  const { config, client, logger, watch, memory } = deps;
  const now = deps.now ?? (() => performance.now());
  const { commitsTurns } = hostTraits(deps.hostVersion);

  const timed = (hook: string, started: number, outcome: string, extra = "") => {
    const ms = Math.round((now() - started) * 10) / 10;
    const line = `context-engine: hook=${hook} ms=${ms} outcome=${outcome}${extra ? ` ${extra}` : ""}`;
    if (outcome === "ok" || outcome === "skipped") logger.debug?.(line);
    else logger.warn?.(line);
  };

  async function postTurn(hook: string, params: Params, messages: unknown[], prePromptMessageCount: number) {
    const started = now();
    if (commitsTurns === true) {
      // This host commits the turn with commitTurn; its tool loop calls afterTurn with
      // in-flight copies that the service could not tell from new messages.
      timed(hook, started, "skipped", "reason=commitTurn");
      return undefined;
    }
    watch?.turn(str(params.sessionKey) ?? str(params.sessionId));
    try {
      const rc = runtimeContextOf(params);
      const body = compact({
        sessionId: str(params.sessionId),
        sessionKey: str(params.sessionKey),
        messages: outgoingMessages(messages, commitsTurns),
        prePromptMessageCount,
        isHeartbeat: bool(params.isHeartbeat),
        tokenBudget: num(params.tokenBudget) ?? num(rc.tokenBudget),
      });
      const answer = await client.request<Params>("POST", "/after-turn", { body });
      timed(hook, started, "ok", `ingested=${String(answer.ingested ?? "?")}`);
      return answer;
    } catch (error) {
      timed(hook, started, "error", `error=${JSON.stringify(describe(error))}`);
      return undefined;
    }
  }

  return {
    info: {
      id: ENGINE_ID,
      name: "context-engine",
      version: PLUGIN_VERSION,
      ownsCompaction: true,
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    },

    // The service builds its state from assemble and commitTurn; nothing to import here.
    async bootstrap(_params: Params) {
      return { bootstrapped: false, importedMessages: 0, reason: "state is kept by the context-engine service" };
    },

    // The host transcript is never rewritten by this engine.
    async maintain(_params: Params) {
      return { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: "no transcript maintenance" };
    },

    async assemble(params: Params): Promise<AssembleResult> {
      const started = now();
      const phase = assemblePhase(params, commitsTurns);
      const session = str(params.sessionKey) ?? str(params.sessionId);
      if (phase === "pre_prompt") watch?.prePrompt(session);
      const hostMessages = Array.isArray(params.messages) ? (params.messages as unknown[]) : [];
      const passthrough = () => ({ messages: hostMessages, estimatedTokens: estimateTokens(hostMessages) });
      // The service could not answer: a pre-prompt call keeps the prompt its last answer built.
      const unanswered = (): AssembleResult => {
        if (phase !== "pre_prompt" || !memory) return passthrough();
        const kept = memory.fallback(session, hostMessages);
        const result: AssembleResult = { messages: kept.messages, estimatedTokens: estimateTokens(kept.messages) };
        if (kept.systemPromptAddition) result.systemPromptAddition = kept.systemPromptAddition;
        return result;
      };
      try {
        const request = (messages: unknown[], omitted: number) =>
          client.request<Params>("POST", "/assemble", {
            body: assembleBody(config, params, phase, messages, omitted, commitsTurns),
          });
        // A long history is sent by its newest messages: pre_prompt rebuilds the prompt from what
        // the service stores and reads the host's only to find turns it lacks; tool_loop reads
        // only the end of the history and its answer goes back after the messages left out.
        const tail = config.assembleTailMessages;
        const omitted = tail > 0 ? Math.max(0, hostMessages.length - tail) : 0;
        let answer = await request(hostMessages.slice(omitted), omitted);
        let sent = omitted > 0 ? "tail" : "whole";
        if (omitted > 0 && passthroughReason(answer) === "host_history_needed") {
          answer = await request(hostMessages, 0);
          sent = "whole-again";
        }
        if (!Array.isArray(answer.messages)) throw new Error("the answer has no messages array");
        const detail = `in=${hostMessages.length} sent=${sent} out=${answer.messages.length}`;
        // A passthrough answers with what it was sent: the host's own history is the whole one.
        const passedThrough =
          (sent === "tail" || phase === "pre_prompt") && passthroughReason(answer) !== undefined;
        const head = sent === "tail" && phase === "tool_loop" ? hostMessages.slice(0, omitted) : [];
        const apart = phase === "pre_prompt" ? summaryApart(answer.messages) : answer.messages;
        const answered = phase === "pre_prompt" && memory ? memory.pinSummary(session, apart, summaryText) : apart;
        const messages = passedThrough ? hostMessages : head.length > 0 ? head.concat(answered) : answered;
        const result: AssembleResult = {
          messages,
          estimatedTokens: passedThrough
            ? estimateTokens(hostMessages)
            : (num(answer.estimatedTokens) ?? estimateTokens(answer.messages)) + estimateTokens(head),
        };
        // Kept with a passthrough too: the system prompt stays the same for the whole session.
        const addition = str(answer.systemPromptAddition);
        if (addition) result.systemPromptAddition = addition;
        if (phase === "pre_prompt") memory?.remember(session, hostMessages, messages, addition);
        timed(`assemble.${phase}`, started, "ok", passedThrough ? `${detail} passthrough` : detail);
        return result;
      } catch (error) {
        timed(`assemble.${phase}`, started, "passthrough", `error=${JSON.stringify(describe(error))}`);
        return unanswered();
      }
    },

    async commitTurn(params: Params) {
      const started = now();
      watch?.turn(str(params.sessionKey) ?? str(params.sessionId));
      const rc = runtimeContextOf(params);
      const admission = params.admission && typeof params.admission === "object" ? (params.admission as Params) : {};
      const body = compact({
        sessionId: str(params.sessionId),
        sessionKey: str(params.sessionKey),
        agentId: agentIdOf(params) ?? str(admission.agentId),
        advancementKey: str(params.advancementKey),
        messages: messagesJson(params.messages),
        isHeartbeat: bool(params.isHeartbeat),
        tokenBudget: num(rc.tokenBudget),
        admission: anchor(params.admission, ADMISSION_FIELDS),
        terminal: anchor(params.terminal, TERMINAL_FIELDS),
      });
      let answer: Params;
      try {
        answer = await client.request<Params>("POST", "/commit-turn", { body });
      } catch (error) {
        if (error instanceof ServiceError && PERMANENT_COMMIT_STATUSES.has(error.status)) {
          timed("commitTurn", started, "refused", `status=${error.status} code=${error.code}`);
          logger.error?.(
            `context-engine: the service refused turn ${String(body.advancementKey)} (${error.code}: ${error.message}); ` +
              "acknowledged so the session is not blocked",
          );
          return { status: "committed" as const };
        }
        timed("commitTurn", started, "error", `error=${JSON.stringify(describe(error))}`);
        throw error instanceof Error ? error : new Error(String(error));
      }
      const status = answer.status;
      if (status !== "committed" && status !== "duplicate") {
        timed("commitTurn", started, "error", "error=\"invalid status\"");
        throw new Error(`context-engine: /commit-turn answered an unknown status: ${String(status)}`);
      }
      timed("commitTurn", started, "ok", `status=${status} ingested=${String(answer.ingested ?? "?")}`);
      return { status };
    },

    async compact(params: Params): Promise<CompactResult> {
      const started = now();
      watch?.turn(str(params.sessionKey) ?? str(params.sessionId)); // the host assembles again after it
      let signal: AbortSignal | undefined;
      try {
        const rc = runtimeContextOf(params);
        signal = [params.abortSignal, rc.abortSignal].find((v): v is AbortSignal => v instanceof AbortSignal);
        const body = compact({
          sessionId: str(params.sessionId),
          sessionKey: str(params.sessionKey),
          agentId: agentIdOf(params),
          tokenBudget: num(params.tokenBudget) ?? num(rc.tokenBudget),
          currentTokenCount: num(params.currentTokenCount) ?? num(rc.currentTokenCount),
          compactionTarget: str(params.compactionTarget),
          customInstructions: str(params.customInstructions),
          force: bool(params.force),
          trigger: str(rc.trigger) ?? str(rc.forceReason),
          // The service stops waiting a little before the plugin gives up on the request.
          timeoutMs: Math.max(500, config.compactTimeoutMs - Math.min(5_000, Math.floor(config.compactTimeoutMs / 10))),
        });
        const answer = await client.request<Params>("POST", "/compact", {
          body,
          signal,
          timeoutMs: config.compactTimeoutMs,
        });
        const result = compactResult(answer);
        timed("compact", started, result.ok ? "ok" : "not_ok", `compacted=${result.compacted} reason=${result.reason ?? ""}`);
        return result;
      } catch (error) {
        const reason = signal?.aborted ? "aborted" : `service_error: ${describe(error)}`;
        timed("compact", started, "error", `error=${JSON.stringify(reason)}`);
        return { ok: false, compacted: false, reason };
      }
    },

    // Older hosts (before durable commitTurn) call afterTurn with the whole snapshot.
    async afterTurn(params: Params) {
      const messages = Array.isArray(params.messages) ? (params.messages as unknown[]) : [];
      const pre = num(params.prePromptMessageCount);
      await postTurn("afterTurn", params, messages, pre !== undefined && pre >= 0 ? Math.floor(pre) : 0);
    },

    async ingest(params: Params) {
      const answer = await postTurn("ingest", params, params.message ? [params.message] : [], 0);
      return { ingested: Number(answer?.ingested ?? 0) > 0 };
    },

    async ingestBatch(params: Params) {
      const messages = Array.isArray(params.messages) ? (params.messages as unknown[]) : [];
      const answer = await postTurn("ingestBatch", params, messages, 0);
      return { ingestedCount: Number(answer?.ingested ?? 0) };
    },

    async dispose() {},
  };
}

export type ContextEngine = ReturnType<typeof createContextEngine>;

function compactResult(answer: Params): CompactResult {
  const ok = answer.ok === true;
  const compacted = ok && answer.compacted === true;
  const out: CompactResult = { ok, compacted };
  const reason = str(answer.reason);
  if (reason) out.reason = reason;
  const r = answer.result && typeof answer.result === "object" ? (answer.result as Params) : undefined;
  if (r) {
    const result: Params = { tokensBefore: num(r.tokensBefore) ?? 0 };
    const summary = str(r.summary);
    if (summary) result.summary = summary;
    const firstKept = str(r.firstKeptEntryId);
    if (firstKept) result.firstKeptEntryId = firstKept;
    const after = num(r.tokensAfter);
    if (after !== undefined) result.tokensAfter = after;
    if (r.details !== undefined) result.details = r.details;
    out.result = result;
  }
  return out;
}
