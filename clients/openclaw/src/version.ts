// The plugin's version, read from package.json (the one place it is written), and the host's.

import { readFileSync } from "node:fs";

const PACKAGE_NAME = "context-engine";

function packageVersion(): string {
  // src/version.ts in a checkout, dist/src/version.js in the package: the first package.json up
  // the tree that is this plugin's.
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not there: look further up
    }
  }
  return "unknown";
}

export const PLUGIN_VERSION = packageVersion();

/** The host's version as its plugin API reports it (`api.runtime.version`), else "unknown". */
export function hostVersionOf(api: unknown): string {
  const runtime = api && typeof api === "object" ? (api as { runtime?: unknown }).runtime : undefined;
  const version = runtime && typeof runtime === "object" ? (runtime as { version?: unknown }).version : undefined;
  return typeof version === "string" && version.trim() ? version.trim() : "unknown";
}

/** Sent with every request, so the service can tell which host and plugin called it. */
export function versionHeaders(hostVersion: string): Record<string, string> {
  return { "x-plugin-version": PLUGIN_VERSION, "x-host-version": `openclaw/${hostVersion}` };
}
