// A small local HTTP server standing in for the context-engine service in unit tests.
// It records every request (method, path, headers, raw body, parsed JSON) and answers
// from per-route handlers.

import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Received = {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  raw: string;
  json: any;
};

export type Reply = { status?: number; json?: unknown; text?: string; delayMs?: number; hang?: boolean };
export type Handler = (req: Received) => Reply | Promise<Reply>;

export class StubService {
  readonly received: Received[] = [];
  readonly routes = new Map<string, Handler>();
  /** Requests whose connection the client closed before an answer was sent. */
  aborted = 0;
  private server: Server | undefined;
  private sockets = new Set<import("node:net").Socket>();
  url = "";

  on(methodAndPath: string, handler: Handler | Reply): this {
    this.routes.set(methodAndPath, typeof handler === "function" ? handler : () => handler);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  bodies(path: string): any[] {
    return this.received.filter((r) => r.path.split("?")[0] === path).map((r) => r.json);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let json: unknown;
    try {
      json = raw ? JSON.parse(raw) : undefined;
    } catch {
      json = undefined;
    }
    const received: Received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, raw, json };
    this.received.push(received);
    const route = this.routes.get(`${received.method} ${received.path.split("?")[0]}`);
    const reply: Reply = route
      ? await route(received)
      : { status: 404, json: { error: { code: "NOT_FOUND", message: "no such route", details: {} } } };
    let closed = false;
    res.on("close", () => {
      if (!res.writableFinished) {
        closed = true;
        this.aborted += 1;
      }
    });
    if (reply.hang) return; // never answers; the client must give up
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (closed) return;
    const status = reply.status ?? 200;
    if (reply.text !== undefined) {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
      res.end(reply.text);
    } else {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.json ?? {}));
    }
  }
}

/** A loopback port with nothing listening on it. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export const silentLogger = () => {
  const lines: { level: string; message: string }[] = [];
  const log = (level: string) => (message: string) => lines.push({ level, message });
  return { lines, logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") } };
};

/** Every key path of a JSON value ("a.b[0].c"). */
export function keyPaths(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyPaths(v, `${prefix}[${i}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => [`${prefix}.${k}`, ...keyPaths(v, `${prefix}.${k}`)]);
  }
  return [];
}
