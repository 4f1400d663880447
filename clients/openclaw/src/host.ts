// What the host release offers, from its version, and a watch on the hooks it calls.
//
// OpenClaw 2026.8.1 added commitTurn (durable, idempotent turns). Before it (2026.7.x) turns
// reach the engine only through afterTurn, and the pre-prompt assemble has no `runtimeContext`
// key: it is told from the tool-loop one by its `prompt` and `availableTools`, which that host's
// tool loop never sends. From 2026.8.1 the host calls commitTurn at the end of the turn and
// afterTurn inside the tool loop with the in-flight messages (copies that differ from the
// transcript's), so afterTurn must store nothing there. See README.md, Host releases.

import type { Logger } from "./engine.ts";

export const FIRST_COMMIT_TURN_RELEASE = [2026, 8, 1] as const;
// The oldest release the plugin is tested with (tests/host/releases); older ones are refused.
export const OLDEST_SUPPORTED_RELEASE = [2026, 7, 0] as const;

/** [year, month, patch] of an OpenClaw version ("2026.9.6", "2026.8.1-beta.2"), else undefined. */
export function parseRelease(version: string | undefined): number[] | undefined {
  const match = /^(\d{4})\.(\d{1,2})\.(\d+)/.exec(version ?? "");
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function atLeast(release: number[], floor: readonly number[]): boolean {
  for (let i = 0; i < floor.length; i++) {
    if (release[i] !== floor[i]) return release[i] > floor[i];
  }
  return true;
}

export type HostTraits = {
  /** true: the host commits turns with commitTurn; false: only afterTurn; undefined: unknown. */
  commitsTurns?: boolean;
  /** The release is older than the oldest supported one. */
  unsupported: boolean;
};

export function hostTraits(version: string | undefined): HostTraits {
  const release = parseRelease(version);
  if (!release) return { unsupported: false };
  return {
    commitsTurns: atLeast(release, FIRST_COMMIT_TURN_RELEASE),
    unsupported: !atLeast(release, OLDEST_SUPPORTED_RELEASE),
  };
}

/** Watches, per session, whether the host still calls a turn hook between pre-prompt
 * assembles; says so once (per session and process) when it does not. */
export class HookWatch {
  private readonly assemblesSinceTurn = new Map<string, number>();
  private readonly reported = new Set<string>();
  private readonly logger: Logger;
  private readonly hostVersion: string;

  constructor(logger: Logger, hostVersion: string) {
    this.logger = logger;
    this.hostVersion = hostVersion;
  }

  prePrompt(session: string | undefined): void {
    if (!session) return;
    const count = (this.assemblesSinceTurn.get(session) ?? 0) + 1;
    this.assemblesSinceTurn.set(session, count);
    if (count >= 2 && !this.reported.has(session)) {
      this.reported.add(session);
      this.logger.error?.(
        `context-engine: OpenClaw ${this.hostVersion} assembled session ${session} again without ` +
          "calling commitTurn or afterTurn for the turn before: the host does not call the plugin's " +
          "turn hook, so turns are stored only from later assembles' histories",
      );
    }
  }

  turn(session: string | undefined): void {
    if (session) this.assemblesSinceTurn.set(session, 0);
  }
}
