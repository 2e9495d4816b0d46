import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import type { Detection } from "../core/detection.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { parseIdempotencyKey } from "./idempotency.js";
import { call, createHarness, type Harness, TEST_CLIENTS } from "./testdata/app-kit.js";

const CLIENTS = [
  ...TEST_CLIENTS,
  {
    client_id: "batcher",
    client_secret: "batcher-secret",
    scopes: ["DocumentVerification:*"],
    buckets: ["inbox", "reports"],
  },
];
const DETECTION = { source_url: "https://example.com/a.pdf", doc_type: "invoice", region: "GB" };
const JOB = {
  connector: { type: "s3", bucket_name: "inbox", prefixes: ["in/"] },
  output: { type: "s3", bucket_name: "reports", prefix: "out/" },
};

let h: Harness;
let jobs: MemoryResourceStore<DetectionJob>;
afterEach(async () => {
  await h?.close();
});
async function setup() {
  h = await createHarness({ clients: CLIENTS });
  jobs = new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND, { now: () => h.clock.now() });
  h.deps.jobs = jobs;
}
const count = async (store: MemoryResourceStore<Detection> | MemoryResourceStore<DetectionJob>) =>
  (await store.list()).items.length;

describe("parseIdempotencyKey", () => {
  it("takes bare and quoted keys, refuses empty, long and odd ones with a 400", () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
    expect(parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")).toBe(
      "8e03978e-40d5-43e8-bc93-6894a57f9324",
    );
    expect(parseIdempotencyKey('"order 42, try 1"')).toBe("order 42, try 1");
    expect(parseIdempotencyKey("a".repeat(255))).toHaveLength(255);
    for (const bad of ["", '""', "a".repeat(256), "a b", "ke\u200By", '"a\\"b"', "\u202Eabc"]) {
      expect(() => parseIdempotencyKey(bad), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ status: 400, code: "idempotency_key_invalid" }),
      );
    }
  });
});

describe("Idempotency-Key on POST /jobs", () => {
  it("replays the job for the same key and body, 422 for another body, per client", async () => {
    await setup();
    const token = await h.token("batcher");
    const key = randomUUID();
    const headers = { "Idempotency-Key": key };
    const first = await call(h, "POST", "/jobs", { token, body: JOB, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const again = await call(h, "POST", "/jobs", { token, body: JOB, headers });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await count(jobs)).toBe(1);
    const other = await call(h, "POST", "/jobs", {
      token,
      body: { ...JOB, output: { ...JOB.output, prefix: "elsewhere/" } },
      headers,
    });
    expect(other.status).toBe(422);
    expect(other.body.detail[0]).toMatchObject({
      type: "idempotency_key_reused",
      loc: ["header", "idempotency-key"],
    });
    expect(other.body.detail[0].msg).toMatch(/already used with a different request/);
    expect(await count(jobs)).toBe(1);
    // The same key on a detection is another key (kinds never meet).
    const det = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(det.status).toBe(202);
    const bad = await call(h, "POST", "/jobs", { token, body: JOB, headers: { "Idempotency-Key": "" } });
    expect(bad.status).toBe(400);
  });
});

describe("Idempotency-Key on POST /v1/detection", () => {
  it("answers 409 with Retry-After while the first create with the key is still running, then replays it", async () => {
    await setup();
    const token = await h.token("alice");
    const headers = { "Idempotency-Key": "k-409" };
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const create = h.store.create.bind(h.store);
    let entered!: () => void;
    const inCreate = new Promise<void>((r) => {
      entered = r;
    });
    h.store.create = async (obj) => {
      entered();
      await gate;
      return create(obj);
    };
    const first = call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    await inCreate;
    const second = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/still being answered; retry the same request after \d+ seconds/);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    open();
    const answered = await first;
    expect(answered.status).toBe(202);
    const third = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(third.status).toBe(202);
    expect(third.body.id).toBe(answered.body.id);
    expect(await count(h.store)).toBe(1);
  });

  it("a create that failed leaves the key free: the retry creates", async () => {
    await setup();
    const token = await h.token("alice");
    const headers = { "Idempotency-Key": "k-fail" };
    const create = h.store.create.bind(h.store);
    let fail = true;
    h.store.create = async (obj) => {
      if (fail) throw new Error("store down");
      return create(obj);
    };
    const first = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(first.status).toBe(500);
    fail = false;
    const retry = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(retry.status).toBe(202);
    expect(await count(h.store)).toBe(1);
  });

  it("a replayed sample run does not use the allowance again", async () => {
    await setup();
    const token = await h.token("sampler");
    const headers = { "Idempotency-Key": "k-sample", "X-Sample-Run": "true" };
    const first = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(first.status).toBe(202);
    // sampler's allowance is 1: a second real create would be 429.
    const again = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    // Without the sample header it is another request.
    const billable = await call(h, "POST", "/v1/detection", {
      token: await h.token("alice"),
      body: DETECTION,
      headers: { "Idempotency-Key": "k-sample" },
    });
    expect(billable.status).toBe(202);
    expect(billable.body.id).not.toBe(first.body.id);
  });

  it("forgets a key after 24 hours", async () => {
    await setup();
    const token = await h.token("alice");
    const headers = { "Idempotency-Key": "k-day" };
    const first = await call(h, "POST", "/v1/detection", { token, body: DETECTION, headers });
    h.clock.advance(23 * 3600 * 1000);
    const within = await call(h, "POST", "/v1/detection", {
      token: await h.token("alice"),
      body: DETECTION,
      headers,
    });
    expect(within.body.id).toBe(first.body.id);
    h.clock.advance(1 * 3600 * 1000 + 1000);
    const later = await call(h, "POST", "/v1/detection", {
      token: await h.token("alice"),
      body: DETECTION,
      headers,
    });
    expect(later.status).toBe(202);
    expect(later.body.id).not.toBe(first.body.id);
  });

  it("is documented in the OpenAPI document on both creates", async () => {
    await setup();
    const doc = (await call(h, "GET", "/openapi.json")).body;
    for (const [p, op] of [
      ["/v1/detection", "post"],
      ["/jobs", "post"],
    ] as const) {
      const o = doc.paths[p][op];
      expect(o.parameters.map((x: { name: string; in: string }) => `${x.in}:${x.name}`)).toContain(
        "header:Idempotency-Key",
      );
      expect(Object.keys(o.responses)).toEqual(expect.arrayContaining(["400", "409", "422"]));
    }
  });
});
