// HTTP transport to the context-engine service.

import type { PluginConfig } from "./config.ts";
import { wellFormedJson } from "./sanitize.ts";

/** The service could not be reached, did not answer in time, or the caller aborted. */
export class TransportError extends Error {
  readonly kind: "network" | "timeout" | "aborted";
  constructor(kind: "network" | "timeout" | "aborted", message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
    this.kind = kind;
  }
}

/** The service answered with a non-2xx status (body `{"error": {code, message, details}}`). */
export class ServiceError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "ServiceError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export type RequestOptions = {
  /** JSON request body (already plain JSON). */
  body?: unknown;
  /** Overrides the configured timeoutMs. */
  timeoutMs?: number;
  /** The caller's cancellation (the host's abort signal). */
  signal?: AbortSignal;
  /** "json" (default) parses the answer; "text" returns it as a string. */
  responseType?: "json" | "text";
};

export type ServiceClient = {
  readonly baseUrl: string;
  request<T = unknown>(method: "GET" | "POST", path: string, options?: RequestOptions): Promise<T>;
};

/** `headers`: sent with every request (the plugin's and the host's versions). */
export function createClient(
  config: PluginConfig,
  fetchImpl: typeof fetch = fetch,
  extraHeaders: Record<string, string> = {},
): ServiceClient {
  const baseUrl = config.baseUrl;
  return {
    baseUrl,
    async request<T>(method: "GET" | "POST", path: string, options: RequestOptions = {}): Promise<T> {
      const timeoutMs = options.timeoutMs ?? config.timeoutMs;
      if (options.signal?.aborted) {
        throw new TransportError("aborted", `${method} ${path} aborted before it was sent`, {
          cause: options.signal.reason,
        });
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
      const headers: Record<string, string> = {
        ...extraHeaders,
        accept: options.responseType === "text" ? "text/plain, application/json" : "application/json",
      };
      if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
      let payload: string | undefined;
      if (options.body !== undefined) {
        headers["content-type"] = "application/json";
        payload = wellFormedJson(options.body);
      }
      let response: Response;
      let text: string;
      try {
        response = await fetchImpl(`${baseUrl}${path}`, { method, headers, body: payload, signal });
        text = await response.text();
      } catch (error) {
        if (options.signal?.aborted) {
          throw new TransportError("aborted", `${method} ${path} aborted`, { cause: error });
        }
        if (timeout.aborted) {
          throw new TransportError("timeout", `${method} ${path} timed out after ${timeoutMs} ms`, { cause: error });
        }
        throw new TransportError("network", `${method} ${path} failed: ${describe(error)}`, { cause: error });
      }
      if (!response.ok) throw serviceError(response.status, text);
      if (options.responseType === "text") return text as T;
      try {
        return (text ? JSON.parse(text) : {}) as T;
      } catch {
        throw new ServiceError(response.status, "BAD_RESPONSE", `${method} ${path} answered a body that is not JSON`);
      }
    },
  };
}

function serviceError(status: number, text: string): ServiceError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    if (body && typeof body.error === "object" && body.error) {
      return new ServiceError(
        status,
        typeof body.error.code === "string" ? body.error.code : `HTTP_${status}`,
        typeof body.error.message === "string" ? body.error.message : `HTTP ${status}`,
        body.error.details,
      );
    }
  } catch {
    // not the service's error body
  }
  return new ServiceError(status, `HTTP_${status}`, `HTTP ${status}: ${text.slice(0, 200)}`);
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const causeText = cause instanceof Error ? `: ${cause.message}` : "";
    return `${error.message}${causeText}`;
  }
  return String(error);
}
