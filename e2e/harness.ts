/**
 * E2E harness: runs the standalone service as a real process (`node dist/bin/docverify.js standalone`, as
 * `npm start` does) on a free loopback port with its own data directory, and talks to it over HTTP.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const ENTRY = path.join(ROOT, "dist/bin/docverify.js");

export interface TestClient {
  client_id: string;
  client_secret: string;
  scopes: string[];
  sample_allowance?: number;
  buckets?: string[];
}

export const CLIENTS: Record<"full" | "other" | "readonly" | "sampler" | "batch" | "batch2", TestClient> = {
  full: {
    client_id: "acme-bank",
    client_secret: "s3cret-acme-0123456789",
    scopes: ["DocumentVerification:*"],
    sample_allowance: 2,
  },
  other: {
    client_id: "other-lender",
    client_secret: "s3cret-other-0123456789",
    scopes: ["DocumentVerification:detections:*"],
  },
  readonly: {
    client_id: "auditor",
    client_secret: "s3cret-auditor-0123456789",
    scopes: ["DocumentVerification:detections:get"],
  },
  sampler: {
    client_id: "trial-user",
    client_secret: "s3cret-trial-0123456789",
    scopes: ["DocumentVerification:detections:create_sample", "DocumentVerification:detections:get"],
    sample_allowance: 1,
  },
  /** Batch jobs (e2e/jobs.test.ts): may read and write the buckets it lists. */
  batch: {
    client_id: "back-office",
    client_secret: "s3cret-back-office-0123456789",
    scopes: ["DocumentVerification:*"],
    buckets: ["loan-inbox", "loan-reports"],
  },
  batch2: {
    client_id: "second-office",
    client_secret: "s3cret-second-office-0123456789",
    scopes: ["DocumentVerification:jobs:*", "DocumentVerification:detections:get"],
    buckets: ["loan-inbox", "loan-reports"],
  },
};

export interface ServiceOptions {
  env?: Record<string, string>;
  dataDir?: string;
  /** Another build's `dist/bin/docverify.js` (benchmarks comparing before and after); default ENTRY. */
  entry?: string;
}

export class Service {
  proc?: ChildProcess;
  url = "";
  log = "";
  private tokens = new Map<string, string>();
  constructor(
    readonly dataDir: string,
    readonly clientsFile: string,
    private env: Record<string, string>,
    private readonly entry: string = ENTRY,
    /** Whether `startService` made the data directory (then `dispose` removes it). */
    private readonly ownsDataDir = false,
  ) {}

  async start(): Promise<void> {
    this.log = "";
    const proc = spawn(process.execPath, [this.entry, "standalone"], {
      cwd: path.resolve(path.dirname(this.entry), "../.."),
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? os.tmpdir(),
        PORT: "0",
        HOST: "127.0.0.1",
        DOCVERIFY_DATA_DIR: this.dataDir,
        DOCVERIFY_CLIENTS_FILE: this.clientsFile,
        DOCVERIFY_LOG_LEVEL: "warn",
        ...this.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    proc.stdout?.on("data", (d: Buffer) => (this.log += d.toString()));
    this.url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        // A guard against a service that never starts, not a measure of start-up: a CI machine under load
        // (a shared runner, other suites in parallel) has taken more than 30 s to start one.
        () => reject(new Error(`service did not start in 150 s:\n${this.log}`)),
        150_000,
      );
      proc.stderr?.on("data", (d: Buffer) => {
        this.log += d.toString();
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(this.log);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`service exited with ${code} before listening:\n${this.log}`));
      });
    });
  }

  /** SIGTERM and wait (graceful), or SIGKILL (a crash). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    p.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (p.exitCode === null && p.signalCode === null) {
      p.kill("SIGKILL");
      await exited;
    }
    this.tokens.clear();
  }

  /**
   * Stop, then remove what `startService` made for this service (its data directory and clients file), so a
   * test run leaves nothing in the temp folder. A data directory the test passed in is the test's to remove
   * (`removeDataDir`): another service may still be using it.
   */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsDataDir) await removeDataDir(this.dataDir);
  }

  /** Stop and start again on the same data directory; `env`, if given, on top of the settings so far. */
  async restart(env?: Record<string, string>): Promise<void> {
    await this.stop();
    if (env) this.env = { ...this.env, ...env };
    await this.start();
  }

  async token(client: TestClient, scope?: string): Promise<string> {
    const cacheKey = `${client.client_id} ${scope ?? ""}`;
    const cached = this.tokens.get(cacheKey);
    if (cached) return cached;
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    if (scope) form.set("scope", scope);
    const res = await fetch(`${this.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    if (res.status !== 200)
      throw new Error(`token for ${client.client_id}: ${res.status} ${await res.text()}`);
    const t = ((await res.json()) as { access_token: string }).access_token;
    this.tokens.set(cacheKey, t);
    return t;
  }

  async call(
    method: string,
    p: string,
    opts: {
      client?: TestClient;
      token?: string;
      json?: unknown;
      headers?: Record<string, string>;
      body?: RequestInit["body"];
    } = {},
  ): Promise<{ status: number; body: any; headers: Headers }> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token ?? (opts.client ? await this.token(opts.client) : undefined);
    if (token) headers.authorization = `Bearer ${token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(this.url + p, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: the test will see the text */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async create(client: TestClient, json: Record<string, unknown>, headers?: Record<string, string>) {
    return this.call("POST", "/v1/detection", { client, json, headers });
  }

  /** Polls until COMPLETED or FAILED. */
  async waitTerminal(client: TestClient, id: string, timeoutMs = 90_000): Promise<any> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.call("GET", `/v1/detection/${id}`, { client });
      if (r.status !== 200) throw new Error(`GET ${id}: ${r.status} ${JSON.stringify(r.body)}`);
      if (r.body.status === "COMPLETED" || r.body.status === "FAILED") return r.body;
      if (Date.now() > until)
        throw new Error(`${id} still ${r.body.status} after ${timeoutMs} ms\n${this.log.slice(-4000)}`);
      await new Promise((res) => setTimeout(res, 150));
    }
  }
}

export async function startService(opts: ServiceOptions = {}): Promise<Service> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-")));
  const clientsFile = path.join(dataDir, "..", `${path.basename(dataDir)}-clients.json`);
  await writeFile(clientsFile, JSON.stringify({ clients: Object.values(CLIENTS) }));
  const svc = new Service(dataDir, clientsFile, opts.env ?? {}, opts.entry, opts.dataDir === undefined);
  await svc.start();
  return svc;
}

/** Removes a service's data directory and the clients file `startService` writes beside it. */
export async function removeDataDir(dataDir: string): Promise<void> {
  await rm(dataDir, { recursive: true, force: true });
  await rm(path.join(dataDir, "..", `${path.basename(dataDir)}-clients.json`), { force: true });
}

/** Waits for `check` to hold (the event), failing after a generous guard with what was seen last. */
export async function until<T>(
  what: string,
  check: () => Promise<T>,
  ok: (v: T) => boolean,
  guardMs = 60_000,
): Promise<T> {
  const end = Date.now() + guardMs;
  for (;;) {
    const v = await check();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(v)} after ${guardMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A local HTTP server that serves documents by path (the "customer's" file host for source_url). */
export async function startFileServer(
  files: Record<string, { body: Uint8Array | string; type?: string; status?: number }>,
) {
  const server = http.createServer((req, res) => {
    const f = files[req.url ?? ""];
    if (!f) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(f.status ?? 200, { "content-type": f.type ?? "application/pdf" }).end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    /** The random port it listens on: tests allow it with DOCVERIFY_ALLOWED_SOURCE_PORTS. */
    port,
    files,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Runs `node <args>` to its end (a command of the repository, as a user runs it), collecting its output. */
export function runNode(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: opts.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir(), ...opts.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}
