/**
 * Test support for the api's unit tests (not used by the service): builds the app on real local
 * adapters — the in-memory resource store, the directory object store and usage counter in a temp dir.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { JWK } from "jose";
import pino from "pino";
import { Registry } from "prom-client";
import { type Config, loadConfig } from "../../core/config.js";
import type { Detection } from "../../core/detection.js";
import type { Clock, ObjectStore } from "../../core/ports.js";
import type { WindowCounter } from "../../core/window-counter.js";
import { createObjectStoreMemory } from "../../platform/memory/object-store-memory.js";
import { MemoryResourceStore } from "../../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";
import { createLocalUsageCounter } from "../../platform/local/usage-counter.js";
import { createLocalWindowCounter } from "../../platform/local/window-counter.js";
import { createApp } from "../app.js";
import { type AttestationSigner, createAttestationSigner } from "../attestation/signer.js";
import { createClientRegistry } from "../auth/clients.js";
import { storedRevocations } from "../auth/revocations.js";
import { createTokenService } from "../auth/tokens.js";
import type { ApiDeps } from "../deps.js";

export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(d: Date): void;
}

export function manualClock(start = new Date("2030-01-02T03:04:05.000Z")): ManualClock {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (d) => {
      t = d.getTime();
    },
  };
}

export const TEST_KEY = new Uint8Array(Buffer.from("0123456789abcdef0123456789abcdef-test-signing-key"));
/** Cheap scrypt for tests (the default costs ~50 ms per hash). */
export const TEST_SCRYPT_COST = { ln: 4, r: 8, p: 1 };

export const TEST_CLIENTS = [
  {
    client_id: "alice",
    client_secret: "alice-secret",
    scopes: ["DocumentVerification:*"],
    sample_allowance: 2,
  },
  { client_id: "bob", client_secret: "bob-secret", scopes: ["DocumentVerification:detections:*"] },
  { client_id: "reader", client_secret: "reader-secret", scopes: ["DocumentVerification:detections:get"] },
  {
    client_id: "sampler",
    client_secret: "sampler-secret",
    scopes: ["DocumentVerification:detections:create_sample", "DocumentVerification:detections:get"],
    sample_allowance: 1,
  },
];

/** A new Ed25519 private JWK (attestation keys in tests). */
export function testAttestationJwk(): JWK {
  return generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }) as JWK;
}

export interface Harness {
  app: ReturnType<typeof createApp>;
  deps: ApiDeps;
  store: MemoryResourceStore<Detection>;
  clock: ManualClock;
  dir: string;
  /** Every hold of a throttled answer, in ms (the harness does not wait). */
  sleeps: number[];
  /** A bearer token from POST /token for a TEST_CLIENTS client. */
  token(clientId: string, scope?: string): Promise<string>;
  close(): Promise<void>;
}

export async function createHarness(
  opts: {
    clients?: unknown[];
    config?: Partial<Config>;
    publicUrl?: string;
    /** Another object store than the local one in the temp dir (e.g. the S3 adapter). */
    objects?: ObjectStore;
    clock?: ManualClock;
    jobs?: ApiDeps["jobs"];
    /** Shared counters (e.g. Redis, as several replicas share); default: in memory on the harness clock. */
    counters?: WindowCounter;
    /** The attestation signer; default one with a key generated for this harness. */
    attestation?: AttestationSigner | null;
  } = {},
): Promise<Harness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-api-"));
  const clock = opts.clock ?? manualClock();
  const store = new MemoryResourceStore<Detection>("Detection", { now: () => clock.now() });
  const objects = opts.objects ?? createLocalObjectStore(path.join(dir, "objects"));
  const config: Config = { ...loadConfig({}), ...opts.config };
  await objects.ensureBucket(config.bucket);
  const clientList = opts.clients ?? TEST_CLIENTS;
  const sleeps: number[] = [];
  const deps: ApiDeps = {
    detections: store,
    ...(opts.jobs ? { jobs: opts.jobs } : {}),
    objects,
    bucket: config.bucket,
    memory: createObjectStoreMemory(objects, config.bucket),
    clients: createClientRegistry({ clients: clientList }, { cost: TEST_SCRYPT_COST }),
    tokens: createTokenService({ key: TEST_KEY, ttlSeconds: config.tokenTtlSeconds, clock }),
    revocations: storedRevocations(objects, config.bucket, pino({ level: "silent" })),
    usage: createLocalUsageCounter(path.join(dir, "usage")),
    counters: opts.counters ?? createLocalWindowCounter({ clock }),
    config,
    log: pino({ level: "silent" }),
    metrics: new Registry(),
    clock,
    ready: async () => ({ ok: true }),
    publicUrl: opts.publicUrl ?? "http://127.0.0.1:8080",
    attestation:
      opts.attestation !== undefined
        ? opts.attestation
        : await createAttestationSigner({ privateJwk: testAttestationJwk(), serviceVersion: "0.0.0-test" }),
    // Throttled answers are held for real in the service; here the hold is recorded, not waited for.
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  const app = createApp(deps);
  const secrets = new Map(
    (clientList as { client_id: string; client_secret?: string }[]).map((c) => [
      c.client_id,
      c.client_secret,
    ]),
  );
  return {
    app,
    deps,
    sleeps,
    store,
    clock,
    dir,
    async token(clientId, scope) {
      const form = new URLSearchParams({
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: secrets.get(clientId) ?? "",
      });
      if (scope !== undefined) form.set("scope", scope);
      const res = await app.request("/token", { method: "POST", body: form });
      if (res.status !== 200) throw new Error(`token for ${clientId}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { access_token: string }).access_token;
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** JSON request helper: `call(app, "POST", "/v1/detection", { token, body, headers })`. */
export async function call(
  h: Harness,
  method: string,
  url: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect answers freely
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await h.app.request(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
