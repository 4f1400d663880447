// Turning host values into plain JSON before they leave the process.
//
// The host hands the engine objects that mix data with live values: functions
// (runtimeContext.llm.complete, rewriteTranscriptEntries), AbortSignals, Sets,
// and whole config objects that hold provider API keys. Request bodies are
// built field by field from an allow-list (see engine.ts); every value that
// goes into a body passes through `toJson` first, so nothing that is not plain
// JSON can slip through even inside a message.

const MAX_DEPTH = 64;

/** A JSON-safe deep copy: functions, symbols, signals and undefined are dropped,
 * Sets become sorted arrays, Maps plain objects, Dates ISO strings, bigints
 * numbers (or strings when unsafe), non-finite numbers null, cycles dropped. */
export function toJson(value: unknown): unknown {
  return convert(value, new WeakSet<object>(), 0);
}

function convert(value: unknown, seen: WeakSet<object>, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : null;
    case "bigint":
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (value === null) return null;
  const obj = value as object;
  if (isAbortSignal(obj)) return undefined;
  if (depth >= MAX_DEPTH || seen.has(obj)) return undefined;
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
  seen.add(obj);
  try {
    if (obj instanceof Set) return sortedArray([...obj].map((v) => convert(v, seen, depth + 1)));
    if (obj instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of obj) {
        const converted = convert(v, seen, depth + 1);
        if (converted !== undefined) out[String(k)] = converted;
      }
      return out;
    }
    if (Array.isArray(obj)) {
      // JSON arrays keep their length: a value that cannot be JSON becomes null.
      return obj.map((v) => {
        const converted = convert(v, seen, depth + 1);
        return converted === undefined ? null : converted;
      });
    }
    if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) return undefined;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) {
      const converted = convert((obj as Record<string, unknown>)[key], seen, depth + 1);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  } finally {
    seen.delete(obj);
  }
}

function sortedArray(values: unknown[]): unknown[] {
  const kept = values.filter((v) => v !== undefined);
  if (kept.every((v) => typeof v === "string")) return (kept as string[]).sort();
  return kept;
}

function isAbortSignal(obj: object): boolean {
  if (typeof AbortSignal !== "undefined" && obj instanceof AbortSignal) return true;
  const candidate = obj as { aborted?: unknown; addEventListener?: unknown; throwIfAborted?: unknown };
  return (
    typeof candidate.aborted === "boolean" &&
    typeof candidate.addEventListener === "function" &&
    typeof candidate.throwIfAborted === "function"
  );
}

// JSON.stringify writes a lone UTF-16 surrogate (a string cut inside an emoji by a slice) as an
// escape such as \ud83d, never raw, and writes a literal backslash as \\. So an escape in the
// surrogate range preceded by an even run of backslashes is exactly a lone surrogate.
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** A request body as JSON text in which every lone surrogate is U+FFFD. No UTF-8 text can hold a
 * lone surrogate, so the service refuses a body that carries one (400); the host would then lose
 * the turn that holds it, and fall back to its own history on every later assemble. The
 * replacement is the one TextEncoder and String.prototype.toWellFormed make, so the same host
 * message always becomes the same stored message. */
export function wellFormedJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes("\\ud") ? text.replace(LONE_SURROGATE_ESCAPE, "$1\\ufffd") : text;
}

/** A non-empty string, else undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** A finite number, else undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A boolean, else undefined. */
export function bool(value: unknown): boolean | undefined {
  return typeof value === "boolean" ? value : undefined;
}

/** Tool names from a Set, an array or any iterable of strings, sorted and deduplicated. */
export function toolNames(value: unknown): string[] | undefined {
  if (value === null || value === undefined || typeof value === "string") return undefined;
  if (typeof (value as Iterable<unknown>)[Symbol.iterator] !== "function") return undefined;
  const names = new Set<string>();
  for (const item of value as Iterable<unknown>) if (typeof item === "string" && item) names.add(item);
  return [...names].sort();
}

/** The host's messages as JSON (an array; anything else becomes an empty array). */
export function messagesJson(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [];
  return (toJson(value) as unknown[]).filter((m) => m !== null && typeof m === "object");
}

/** An object whose undefined fields are removed (JSON.stringify drops them anyway;
 * removing them keeps request bodies easy to compare in tests and logs). */
export function compact<T extends Record<string, unknown>>(obj: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as Partial<T>;
}

/** A rough token estimate of messages (characters / 4), used only when the
 * service cannot answer and the host's own messages pass through. */
export function estimateTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let chars = 0;
  for (const message of messages) {
    try {
      chars += JSON.stringify(toJson(message))?.length ?? 0;
    } catch {
      // an unserialisable message counts as nothing
    }
  }
  return Math.ceil(chars / 4);
}
