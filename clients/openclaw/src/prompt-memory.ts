// What the last pre-prompt assemble of each session answered, kept for the life of the host
// process, so that an assemble the service cannot answer keeps the prompt the service built:
// the same system prompt addition (the Session Context Guide), and the same assembled history
// with the host's messages since appended. A provider's prompt cache then survives an outage.
// A host whose history no longer starts as it did then (its own compaction, another process)
// gets its own messages, as before.

type Remembered = {
  addition?: string;
  messages: unknown[];
  /** How many host messages the answer stood for, and the last of them (as JSON). */
  hostCount: number;
  hostLast: string;
};

const KEPT_SESSIONS = 256;

export type Fallback = { messages: unknown[]; systemPromptAddition?: string; reused: boolean };

export class PromptMemory {
  private readonly sessions = new Map<string, Remembered>();
  private readonly summaryTimes = new Map<string, { text: string; timestamp: unknown }>();

  /** The summary (the first message) with the timestamp it had the first time this process saw
   * it. The service dates it with the first message after it, or the time of the answer when
   * none follows yet (right after a commit); the host writes that time into the text it sends. */
  pinSummary(session: string | undefined, messages: unknown[], isSummary: (m: unknown) => string | undefined): unknown[] {
    const first = messages[0] as Record<string, unknown> | undefined;
    const text = first ? isSummary(first) : undefined;
    if (!session || !first || text === undefined) return messages;
    const pinned = this.summaryTimes.get(session);
    if (!pinned || pinned.text !== text) {
      this.summaryTimes.delete(session);
      this.summaryTimes.set(session, { text, timestamp: first.timestamp });
      if (this.summaryTimes.size > KEPT_SESSIONS) {
        const oldest = this.summaryTimes.keys().next().value;
        if (oldest !== undefined) this.summaryTimes.delete(oldest);
      }
      return messages;
    }
    if (pinned.timestamp === first.timestamp) return messages;
    const { timestamp: _dropped, ...rest } = first;
    const again = pinned.timestamp === undefined ? rest : { ...rest, timestamp: pinned.timestamp };
    return [again, ...messages.slice(1)];
  }

  remember(session: string | undefined, host: unknown[], messages: unknown[], addition?: string): void {
    if (!session) return;
    this.sessions.delete(session); // re-inserted last: the map's order is the eviction order
    this.sessions.set(session, { addition, messages, hostCount: host.length, hostLast: lastJson(host, host.length) });
    if (this.sessions.size > KEPT_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
  }

  /** The prompt to give the host when the service cannot answer this session's assemble. */
  fallback(session: string | undefined, host: unknown[]): Fallback {
    const kept = session ? this.sessions.get(session) : undefined;
    if (!kept) return { messages: host, reused: false };
    const addition = kept.addition !== undefined ? { systemPromptAddition: kept.addition } : {};
    const continues = host.length >= kept.hostCount && lastJson(host, kept.hostCount) === kept.hostLast;
    if (!continues) return { messages: host, reused: false, ...addition };
    return { messages: kept.messages.concat(host.slice(kept.hostCount)), reused: true, ...addition };
  }
}

function lastJson(host: unknown[], count: number): string {
  if (count <= 0) return "";
  try {
    return JSON.stringify(host[count - 1]) ?? "";
  } catch {
    return "";
  }
}
