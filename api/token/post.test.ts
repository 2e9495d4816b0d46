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
