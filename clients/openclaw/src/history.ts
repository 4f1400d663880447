// The host's messages as they go to the service, and the service's as they go back to the host,
// shaped so that each host release stores every message once and sees the same prompt prefix.

import { messagesJson } from "./sanitize.ts";

type Params = Record<string, unknown>;

/** Messages as they leave the plugin. A host before commitTurn (`commitsTurns` false) hands
 * afterTurn the agent loop's copy of the turn's user message, stamped when the loop made it,
 * and later assembles the transcript's copy of it, stamped when the turn was recorded: the
 * same message with two timestamps, which the service would store twice. From such a host,
 * user messages are sent without their timestamp (the service tells them apart by content
 * and by how often each occurs). */
export function outgoingMessages(value: unknown, commitsTurns?: boolean): unknown[] {
  const messages = messagesJson(value);
  if (commitsTurns !== false) return messages;
  return messages.map((m) => {
    const message = m as Params;
    if (message.role !== "user" || !("timestamp" in message)) return message;
    const { timestamp: _stamp, ...rest } = message;
    return rest;
  });
}

// What OpenClaw writes for an attempt that failed before the model answered (an overflow
// refused by the provider). 2026.8.x replays such an attempt merged with the retry's answer,
// under the failed attempt's timestamp: a message the host never committed.
const FAILED_ATTEMPT_TEXT = "[assistant turn failed before producing content]";

/** A replayed failed attempt: an assistant message with the host's `errorMessage` whose text
 * starts with the host's placeholder. */
export function isFailedAttemptReplay(message: unknown): boolean {
  if (!message || typeof message !== "object") return false;
  const m = message as Params;
  if (m.role !== "assistant" || typeof m.errorMessage !== "string" || !m.errorMessage) return false;
  const content = m.content;
  const first = Array.isArray(content) ? (content[0] as Params | undefined)?.text : content;
  return typeof first === "string" && first.startsWith(FAILED_ATTEMPT_TEXT);
}

const SUMMARY_MARK = "[Session History Summary]";

/** The service merges consecutive user messages, so its summary shares one message with the first
 * user message after it, once there is one; right after a commit the summary stands alone and the
 * host appends the prompt. Kept apart, the summary message is the same in every request until
 * the next commit, and so is the prompt prefix (the host itself sends consecutive user messages:
 * the prompt, then its own context). */
/** The summary's text when the message is the service's summary, else undefined. */
export function summaryText(message: unknown): string | undefined {
  const m = message as Params | undefined;
  if (!m || m.role !== "user") return undefined;
  const first = Array.isArray(m.content) ? (m.content[0] as Params | undefined)?.text : m.content;
  return typeof first === "string" && first.startsWith(SUMMARY_MARK) ? first : undefined;
}

export function summaryApart(messages: unknown[]): unknown[] {
  const first = messages[0] as Params | undefined;
  if (!first || first.role !== "user" || !Array.isArray(first.content) || first.content.length < 2) return messages;
  const head = first.content[0] as Params | undefined;
  if (!head || head.type !== "text" || typeof head.text !== "string" || !head.text.startsWith(SUMMARY_MARK)) {
    return messages;
  }
  return [{ ...first, content: [head] }, { ...first, content: first.content.slice(1) }, ...messages.slice(1)];
}
