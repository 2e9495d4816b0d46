import { decodeJwt } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../testdata/app-kit.js";

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

async function token(form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await h.app.request("/token", { method: "POST", body: new URLSearchParams(form), headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;

describe("POST /token: happy paths", () => {
  it("grants every registered scope when no scope is asked for", async () => {
    const r = await token({
      grant_type: "client_credentials",
      client_id: "bob",
      client_secret: "bob-secret",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      token_type: "bearer",
      expires_in: 3600,
      scope: "DocumentVerification:detections:*",
    });
    expect(r.headers.get("cache-control")).toBe("no-store");
    const claims = decodeJwt(r.body.access_token as string);
    expect(claims.sub).toBe("bob");
    expect(claims.scope).toBe("DocumentVerification:detections:*");
  });

  it("grants requested scopes the registration covers, as named", async () => {
    const r = await token({
      grant_type: "client_credentials",
      client_id: "alice",
      client_secret: "alice-secret",
      scope: "DocumentVerification:detections:get  DocumentVerification:detections:create",
    });
    expect(r.body.scope).toBe("DocumentVerification:detections:get DocumentVerification:detections:create");
  });

  it("a requested wildcard the registration does not cover grants the registered scopes beneath it", async () => {
    const r = await token({
      grant_type: "client_credentials",
      client_id: "reader",
      client_secret: "reader-secret",
      scope: "DocumentVerification:*",
    });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("DocumentVerification:detections:get");
  });

  it("drops requested scopes the client is not registered for", async () => {
    const r = await token({
      grant_type: "client_credentials",
      client_id: "reader",
      client_secret: "reader-secret",
      scope: "DocumentVerification:detections:get DocumentVerification:detections:delete",
    });
    expect(r.body.scope).toBe("DocumentVerification:detections:get");
  });

  it("accepts HTTP Basic client credentials", async () => {
    const r = await token(
      { grant_type: "client_credentials" },
      { authorization: basic("bob", "bob-secret") },
    );
    expect(r.status).toBe(200);
    expect(decodeJwt(r.body.access_token as string).sub).toBe("bob");
  });

  it("the token lifetime follows the configuration", async () => {
    const short = await createHarness({ config: { tokenTtlSeconds: 90 } });
    try {
      const res = await short.app.request("/token", {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: "bob",
          client_secret: "bob-secret",
        }),
      });
      expect(((await res.json()) as { expires_in: number }).expires_in).toBe(90);
    } finally {
      await short.close();
    }
  });
});

describe("POST /token: errors", () => {
  it("400 unsupported grant_type for another or a missing grant type", async () => {
    for (const form of <Record<string, string>[]>[
      { grant_type: "password", client_id: "bob", client_secret: "bob-secret" },
      { client_id: "bob", client_secret: "bob-secret" },
    ]) {
      const r = await token(form);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ detail: "unsupported grant_type", error: "unsupported_grant_type" });
    }
  });

  it("401 invalid_client for a wrong secret or an unknown client, with no hint which", async () => {
    const wrong = await token({ grant_type: "client_credentials", client_id: "bob", client_secret: "nope" });
    const unknown = await token({
      grant_type: "client_credentials",
      client_id: "mallory",
      client_secret: "nope",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers.get("www-authenticate")).toBeNull();
  });

  it("401 with a Basic challenge when Basic credentials were wrong", async () => {
    const r = await token({ grant_type: "client_credentials" }, { authorization: basic("bob", "wrong") });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
    expect(r.headers.get("www-authenticate")).toMatch(/^Basic realm="docverify"/);
  });

  it("401 when no client credentials are given at all", async () => {
    const r = await token({ grant_type: "client_credentials" });
    expect(r.status).toBe(401);
    expect(r.body.detail).toMatch(/client_id and client_secret/);
  });

  it("400 invalid_request when credentials come both as Basic and in the form", async () => {
    const r = await token(
      { grant_type: "client_credentials", client_id: "bob", client_secret: "bob-secret" },
      { authorization: basic("bob", "bob-secret") },
    );
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
  });

  it("400 invalid_scope when nothing requested can be granted", async () => {
    const r = await token({
      grant_type: "client_credentials",
      client_id: "reader",
      client_secret: "reader-secret",
      scope: "DocumentVerification:detections:delete",
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_scope");
    expect(r.body.detail).toMatch(/registered for: DocumentVerification:detections:get/);
  });

  it("a JSON body is refused with a detail saying the body must be form-encoded", async () => {
    const res = await h.app.request("/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "client_credentials",
        client_id: "bob",
        client_secret: "bob-secret",
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { detail: string; error: string };
    expect(body.error).toBe("invalid_request");
    expect(body.detail).toMatch(/must be form-encoded/);
  });

  it("a repeated form field is invalid_request", async () => {
    const res = await h.app.request("/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=bob&client_id=alice&client_secret=bob-secret",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("GET /token is 405", async () => {
    const res = await h.app.request("/token");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

describe("POST /token: unknown scopes", () => {
  const ask = (client_id: string, client_secret: string, scope: string) =>
    token({ grant_type: "client_credentials", client_id, client_secret, scope });

  it("drops unknown scope names, also under a wildcard the client holds", async () => {
    const r = await ask(
      "alice",
      "alice-secret",
      "DocumentVerification:detections:get DocumentVerification:admin DocumentVerification:detections:purge",
    );
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe("DocumentVerification:detections:get");
    expect(decodeJwt(r.body.access_token as string).scope).toBe("DocumentVerification:detections:get");
    // Unknown wildcards beneath one the client holds grant nothing either.
    const wild = await ask(
      "alice",
      "alice-secret",
      "DocumentVerification:admin:* DocumentVerification:jobs:*",
    );
    expect(wild.body.scope).toBe("DocumentVerification:jobs:*");
  });

  it("400 invalid_scope when only unknown scopes are asked for", async () => {
    for (const scope of ["DocumentVerification:admin", "DocumentVerification:admin:*", "openid profile"]) {
      const r = await ask("alice", "alice-secret", scope);
      expect(r.status, scope).toBe(400);
      expect(r.body.error).toBe("invalid_scope");
    }
  });

  it("never grants an unknown scope the clients file registers", async () => {
    const typo = await createHarness({
      clients: [
        {
          client_id: "typo",
          client_secret: "typo-secret",
          scopes: ["DocumentVerification:detections:get", "DocumentVerification:detections:craete"],
        },
      ],
    });
    try {
      const r = await typo.app.request("/token", {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: "typo",
          client_secret: "typo-secret",
        }),
      });
      expect(((await r.json()) as { scope: string }).scope).toBe("DocumentVerification:detections:get");
    } finally {
      await typo.close();
    }
  });
});

describe("POST /token: throttling of failed authentication", () => {
  /** A token request as if from `address` (the Node request @hono/node-server passes as env.incoming). */
  async function from(address: string, client_id: string, client_secret: string) {
    const res = await h.app.request(
      "/token",
      {
        method: "POST",
        body: new URLSearchParams({ grant_type: "client_credentials", client_id, client_secret }),
      },
      { incoming: { socket: { remoteAddress: address } } },
    );
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  }

  it("429 with Retry-After for an address after 10 failures, doubling; the secret is not even checked", async () => {
    for (let i = 0; i < 10; i++) expect((await from("198.51.100.7", `guess-${i}`, "x")).status).toBe(401);
    const blocked = await from("198.51.100.7", "bob", "bob-secret");
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("1");
    expect(blocked.body).toEqual({
      error: "temporarily_unavailable",
      detail: "Too many failed client authentications. Retry after 1 second.",
    });
    // The answer was held for its Retry-After (at most 1 s), so an attacker ignoring it is slowed down.
    expect(h.sleeps).toEqual([1000]);
    // Another address is served.
    expect((await from("198.51.100.8", "bob", "bob-secret")).status).toBe(200);
    h.clock.advance(1_000);
    expect((await from("198.51.100.7", "guess", "x")).status).toBe(401);
    const again = await from("198.51.100.7", "bob", "bob-secret");
    // Blocked for 2 s: held 1 s, then told to come back after the second left.
    expect(again.headers.get("retry-after")).toBe("1");
    expect(h.sleeps).toEqual([1000, 1000]);
    h.clock.advance(2_000);
    expect((await from("198.51.100.7", "bob", "bob-secret")).status).toBe(200);
    expect(await h.deps.metrics.getSingleMetricAsString("docverify_token_throttled_total")).toMatch(
      /reason="address"\} 2/,
    );
  });

  it("a client that authenticated before keeps getting tokens while its id and its address are attacked", async () => {
    expect((await from("192.0.2.10", "alice", "alice-secret")).status).toBe(200);
    // Guesses at alice's secret from 20 addresses block alice's id for every address she never used ...
    for (let i = 0; i < 20; i++) expect((await from(`203.0.113.${i}`, "alice", "nope")).status).toBe(401);
    expect((await from("203.0.113.200", "alice", "alice-secret")).status).toBe(429);
    // ... and guesses at other ids from her own address block that address for everyone else.
    for (let i = 0; i < 10; i++) await from("192.0.2.10", `guess-${i}`, "x");
    expect((await from("192.0.2.10", "bob", "bob-secret")).status).toBe(429);
    // Alice, from where she authenticated before, is still served.
    expect((await from("192.0.2.10", "alice", "alice-secret")).status).toBe(200);
  });

  it("an IPv6 attacker is counted by its /64, not by each address", async () => {
    for (let i = 0; i < 10; i++)
      expect((await from(`2001:db8:7:7::${i + 1}`, `g${i}`, "x")).status).toBe(401);
    expect((await from("2001:db8:7:7:ffff::1", "reader", "reader-secret")).status).toBe(429);
    expect((await from("2001:db8:7:8::1", "reader", "reader-secret")).status).toBe(200);
  });

  it("a malformed request (no secret) is not counted as a guess", async () => {
    for (let i = 0; i < 15; i++) {
      const res = await h.app.request(
        "/token",
        { method: "POST", body: new URLSearchParams({ grant_type: "client_credentials", client_id: "bob" }) },
        { incoming: { socket: { remoteAddress: "198.51.100.9" } } },
      );
      expect(res.status).toBe(401);
    }
    expect((await from("198.51.100.9", "bob", "bob-secret")).status).toBe(200);
  });
});
