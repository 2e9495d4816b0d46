import { writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Detection } from "../core/detection.js";
import { watchClientsFile } from "./auth/clients-reload.js";
import { call, createHarness, type Harness, TEST_CLIENTS, TEST_SCRYPT_COST } from "./testdata/app-kit.js";

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const body = { source_url: "https://docs.example.com/a.pdf", doc_type: "invoice", region: "US" };

describe("bearer authentication", () => {
  it.each([
    ["no header", undefined],
    ["Basic scheme", "Basic YWxpY2U6YWxpY2Utc2VjcmV0"],
    ["Bearer without a token", "Bearer"],
    ["Token scheme", "Token abc"],
  ])("401 Missing bearer token: %s", async (_label, header) => {
    const res = await h.app.request("/v1/detection", { headers: header ? { authorization: header } : {} });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: "Missing bearer token" });
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("accepts the scheme in any case", async () => {
    const t = await h.token("alice");
    const res = await h.app.request("/v1/detection", { headers: { authorization: `bearer ${t}` } });
    expect(res.status).toBe(200);
  });

  it("401 Invalid bearer token for a tampered token (scope escalation)", async () => {
    const t = await h.token("reader");
    const [head, payload, sig] = t.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, scope: "DocumentVerification:*" })).toString(
      "base64url",
    );
    const r = await call(h, "DELETE", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", {
      token: `${head}.${forged}.${sig}`,
    });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: "Invalid bearer token" });
    expect((await call(h, "GET", "/v1/detection", { token: "garbage" })).body).toEqual({
      detail: "Invalid bearer token",
    });
  });

  it("401 Token has expired past the token lifetime (injected clock)", async () => {
    const t = await h.token("alice");
    expect((await call(h, "GET", "/v1/detection", { token: t })).status).toBe(200);
    h.clock.advance(3600 * 1000);
    const r = await call(h, "GET", "/v1/detection", { token: t });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: "Token has expired" });
  });
});

describe("tokens of clients changed in the clients file", () => {
  async function reloading() {
    const file = path.join(h.dir, "clients.json");
    await writeFile(file, JSON.stringify({ clients: TEST_CLIENTS }));
    const clients = await watchClientsFile(file, {
      log: pino({ level: "silent" }),
      cost: TEST_SCRYPT_COST,
      watch: false,
      pollMs: 3_600_000,
    });
    h.deps.clients = clients;
    const rewrite = async (list: object[]) => {
      await writeFile(file, JSON.stringify({ clients: list }));
      expect(await clients.reload()).toBe(true);
    };
    return { clients, rewrite };
  }

  it("401 Invalid bearer token for a client no longer configured, though its token was verified and cached", async () => {
    const { clients, rewrite } = await reloading();
    try {
      const bob = await h.token("bob");
      const alice = await h.token("alice");
      expect((await call(h, "GET", "/v1/detection", { token: bob })).status).toBe(200);
      expect(h.deps.tokens.cachedTokens()).toBeGreaterThan(0);
      await rewrite(TEST_CLIENTS.filter((c) => c.client_id !== "bob"));
      for (const [method, url] of [
        ["GET", "/v1/detection"],
        ["POST", "/v1/detection"],
        ["GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t"],
        ["POST", "/v1/uploads"],
      ] as const) {
        const r = await call(h, method, url, { token: bob, body: method === "POST" ? body : undefined });
        expect(r.status, `${method} ${url}`).toBe(401);
        expect(r.body).toEqual({ detail: "Invalid bearer token" });
      }
      expect((await call(h, "GET", "/v1/detection", { token: alice })).status).toBe(200);
      // Configured again (e.g. a removal undone): its unexpired tokens work again.
      await rewrite(TEST_CLIENTS);
      expect((await call(h, "GET", "/v1/detection", { token: bob })).status).toBe(200);
    } finally {
      clients.close();
    }
  });

  it("a registration narrowed in the file narrows the scopes of tokens issued before", async () => {
    const { clients, rewrite } = await reloading();
    try {
      const alice = await h.token("alice"); // DocumentVerification:*
      expect((await call(h, "POST", "/v1/detection", { token: alice, body })).status).toBe(202);
      await rewrite(
        TEST_CLIENTS.map((c) =>
          c.client_id === "alice" ? { ...c, scopes: ["DocumentVerification:detections:get"] } : c,
        ),
      );
      const r = await call(h, "POST", "/v1/detection", { token: alice, body });
      expect(r.status).toBe(403);
      expect(r.body.detail).toBe("Missing required scopes: DocumentVerification:detections:create");
      expect((await call(h, "GET", "/v1/detection", { token: alice })).status).toBe(200);
    } finally {
      clients.close();
    }
  });
});

describe("scopes", () => {
  it("403 Missing required scopes names exactly the missing scope", async () => {
    const reader = await h.token("reader");
    const r = await call(h, "POST", "/v1/detection", { token: reader, body });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ detail: "Missing required scopes: DocumentVerification:detections:create" });
    const del = await call(h, "DELETE", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: reader });
    expect(del.body).toEqual({ detail: "Missing required scopes: DocumentVerification:detections:delete" });
  });

  it("DocumentVerification:* and detections:* both cover every detection operation", async () => {
    for (const client of ["alice", "bob"]) {
      const t = await h.token(client);
      const created = await call(h, "POST", "/v1/detection", { token: t, body });
      expect(created.status).toBe(202);
      expect((await call(h, "GET", `/v1/detection/${created.body.id}`, { token: t })).status).toBe(200);
      expect((await call(h, "GET", "/v1/detection", { token: t })).status).toBe(200);
      expect((await call(h, "POST", "/v1/uploads", { token: t })).status).toBe(201);
      expect((await call(h, "DELETE", `/v1/detection/${created.body.id}`, { token: t })).status).toBe(200);
    }
  });

  it("a token narrowed at /token only carries what was granted", async () => {
    const t = await h.token("alice", "DocumentVerification:detections:get");
    expect((await call(h, "GET", "/v1/detection", { token: t })).status).toBe(200);
    const r = await call(h, "POST", "/v1/detection", { token: t, body });
    expect(r.status).toBe(403);
  });

  it("a sample run needs create_sample instead of create", async () => {
    const sampler = await h.token("sampler");
    expect((await call(h, "POST", "/v1/detection", { token: sampler, body })).status).toBe(403);
    const ok = await call(h, "POST", "/v1/detection", {
      token: sampler,
      body,
      headers: { "X-Sample-Run": "TRUE" },
    });
    expect(ok.status).toBe(202);
    const bob = await h.token("bob", "DocumentVerification:detections:create");
    const denied = await call(h, "POST", "/v1/detection", {
      token: bob,
      body,
      headers: { "X-Sample-Run": "1" },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toBe("Missing required scopes: DocumentVerification:detections:create_sample");
  });
});

describe("answer order 401 → 403 → 422 → 404", () => {
  it("401 before 403, 422 and 404", async () => {
    const r = await call(h, "GET", "/v1/detection/NOT_VALID", {});
    expect(r.status).toBe(401);
    const c = await call(h, "POST", "/v1/detection", { body: { bad: true } });
    expect(c.status).toBe(401);
  });

  it("403 before 422 (invalid body, invalid id) and before 404", async () => {
    const reader = await h.token("reader");
    expect((await call(h, "POST", "/v1/detection", { token: reader, raw: "{oops" })).status).toBe(403);
    expect((await call(h, "DELETE", "/v1/detection/NOT_VALID", { token: reader })).status).toBe(403);
    expect(
      (await call(h, "DELETE", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: reader })).status,
    ).toBe(403);
  });

  it("422 before 404", async () => {
    const alice = await h.token("alice");
    expect((await call(h, "GET", "/v1/detection/NOT_VALID", { token: alice })).status).toBe(422);
    expect(
      (await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: alice })).status,
    ).toBe(404);
  });
});

describe("isolation between clients", () => {
  it("another client's detection answers 404 to get and delete, and is not listed", async () => {
    const alice = await h.token("alice");
    const bob = await h.token("bob");
    const created = await call(h, "POST", "/v1/detection", { token: alice, body });
    const id = created.body.id;
    expect(await call(h, "GET", `/v1/detection/${id}`, { token: bob })).toMatchObject({
      status: 404,
      body: { detail: "Detection not found" },
    });
    expect((await call(h, "DELETE", `/v1/detection/${id}`, { token: bob })).status).toBe(404);
    expect((await h.store.get(id))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await call(h, "GET", "/v1/detection", { token: bob })).body.items).toEqual([]);
    expect((await call(h, "GET", `/v1/detection/${id}`, { token: alice })).status).toBe(200);
  });

  it("a resource whose label was tampered with is not shown to the label's client", async () => {
    const alice = await h.token("alice");
    const created = await call(h, "POST", "/v1/detection", { token: alice, body });
    const stored = (await h.store.get(created.body.id)) as Detection;
    await h.store.update({
      ...stored,
      metadata: { ...stored.metadata, labels: { "docverify.io/client": "bob" } },
    });
    const bob = await h.token("bob");
    expect((await call(h, "GET", `/v1/detection/${created.body.id}`, { token: bob })).status).toBe(404);
    expect((await call(h, "GET", "/v1/detection", { token: bob })).body.items).toEqual([]);
  });
});

describe("sample allowance", () => {
  it("sample runs are not billable, count against the allowance, then 429", async () => {
    const alice = await h.token("alice"); // sample_allowance 2
    const headers = { "X-Sample-Run": "true" };
    for (let i = 0; i < 2; i++) {
      const r = await call(h, "POST", "/v1/detection", { token: alice, body, headers });
      expect(r.status).toBe(202);
      expect(r.body.billable).toBe(false);
      const stored = (await h.store.get(r.body.id)) as Detection;
      expect(stored.spec).toMatchObject({ sample: true, priority: "sample" });
    }
    const over = await call(h, "POST", "/v1/detection", { token: alice, body, headers });
    expect(over.status).toBe(429);
    expect(over.body.detail).toMatch(/sample run allowance of 2 is used up/);
    expect(await h.deps.usage.used("alice", "sample")).toBe(2);
    // normal runs still work
    expect((await call(h, "POST", "/v1/detection", { token: alice, body })).status).toBe(202);
  });

  it("an invalid sample request does not use the allowance", async () => {
    const sampler = await h.token("sampler"); // allowance 1
    const bad = await call(h, "POST", "/v1/detection", {
      token: sampler,
      body: { ...body, region: "XX" },
      headers: { "X-Sample-Run": "1" },
    });
    expect(bad.status).toBe(422);
    expect(await h.deps.usage.used("sampler", "sample")).toBe(0);
  });

  it("a client without a sample_allowance gets 429 at once", async () => {
    const bob = await h.token("bob");
    const r = await call(h, "POST", "/v1/detection", {
      token: bob,
      body,
      headers: { "X-Sample-Run": "true" },
    });
    expect(r.status).toBe(429);
    expect(r.body.detail).toMatch(/allowance of 0/);
  });
});

describe("rate limit", () => {
  it("is off unless configured", async () => {
    const t = await h.token("alice");
    for (let i = 0; i < 30; i++)
      expect((await call(h, "GET", "/v1/detection", { token: t })).status).toBe(200);
  });

  it("429 with Retry-After over the per-client limit, per client, in a window opened by the first request", async () => {
    const limited = await createHarness({ config: { rateLimitPerMinute: 3 } });
    try {
      const alice = await limited.token("alice");
      const bob = await limited.token("bob");
      expect((await call(limited, "GET", "/v1/detection", { token: alice })).status).toBe(200);
      limited.clock.advance(15_000);
      for (let i = 0; i < 2; i++)
        expect((await call(limited, "GET", "/v1/detection", { token: alice })).status).toBe(200);
      const over = await call(limited, "GET", "/v1/detection", { token: alice });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBe("45");
      expect(over.body.detail).toMatch(/3 requests per minute/);
      expect((await call(limited, "GET", "/v1/detection", { token: bob })).status).toBe(200);
      expect((await call(limited, "GET", "/healthz")).status).toBe(200);
      limited.clock.advance(44_000);
      expect((await call(limited, "GET", "/v1/detection", { token: alice })).status).toBe(429);
      limited.clock.advance(1_000);
      expect((await call(limited, "GET", "/v1/detection", { token: alice })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it("fails open when the counters are unavailable", async () => {
    const limited = await createHarness({ config: { rateLimitPerMinute: 1 } });
    try {
      const alice = await limited.token("alice");
      const broken = new Error("redis is down");
      limited.deps.counters.hit = async () => {
        throw broken;
      };
      for (let i = 0; i < 3; i++)
        expect((await call(limited, "GET", "/v1/detection", { token: alice })).status).toBe(200);
      expect(
        await limited.deps.metrics.getSingleMetricAsString("docverify_throttle_counter_errors_total"),
      ).toMatch(/docverify_throttle_counter_errors_total 3/);
    } finally {
      await limited.close();
    }
  });
});
