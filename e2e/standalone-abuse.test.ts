/**
 * Abuse of the running standalone service over real HTTP (issue 13, phase 1): guessing client secrets
 * from many connections, a clients file edited while serving, deep JSON.
 */
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, request } from "undici";
import { CLIENTS, type Service, startService, type TestClient } from "./harness.js";

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.dispose();
});

/** One HTTP connection whose packets leave from `localAddress` (any 127.0.0.0/8 address is loopback). */
const connectionFrom = (localAddress: string) => new Agent({ connections: 1, localAddress });

async function tokenRequest(
  dispatcher: Agent,
  client_id: string,
  client_secret: string,
): Promise<{ status: number; retryAfter?: string; body: Record<string, unknown> }> {
  const res = await request(`${svc.url}/token`, {
    method: "POST",
    dispatcher,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id, client_secret }).toString(),
  });
  const body = (await res.body.json()) as Record<string, unknown>;
  const retry = res.headers["retry-after"];
  return { status: res.statusCode, retryAfter: typeof retry === "string" ? retry : undefined, body };
}

/**
 * 16 attacking connections, each from its own loopback address: the even ones guess the secret of
 * `target`, the odd ones guess unknown client ids. They run until `stop` resolves, ignoring Retry-After;
 * `statuses[i]` holds connection i's answers.
 */
function attack(target: TestClient, stop: Promise<void>) {
  const statuses: number[][] = Array.from({ length: 16 }, () => []);
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const done = Promise.all(
    statuses.map(async (mine, i) => {
      const agent = connectionFrom(`127.0.0.${i + 2}`);
      // Each connection goes on until it has been refused at least once, and until the test is done.
      for (let n = 0; !stopped || !mine.includes(429); n++) {
        const id = i % 2 === 0 ? target.client_id : `guess-${i}-${n}`;
        mine.push((await tokenRequest(agent, id, `wrong-${i}-${n}`)).status);
      }
      await agent.close();
    }),
  );
  return { statuses, done };
}

describe("POST /token under 16 attacking connections", () => {
  it("serves the legitimate client every time (200, never 429) while the attackers get 429", async () => {
    const legit = connectionFrom("127.0.0.1");
    // The integrator has authenticated before (its usual token renewal).
    expect((await tokenRequest(legit, CLIENTS.full.client_id, CLIENTS.full.client_secret)).status).toBe(200);
    let finish!: () => void;
    const stop = new Promise<void>((r) => {
      finish = r;
    });
    const attackers = attack(CLIENTS.full, stop);
    const legitStatuses: number[] = [];
    try {
      // Wait until the attack is in full swing (some attackers have been refused), then renew tokens.
      while (!attackers.statuses.some((mine) => mine.includes(429)))
        await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < 20; i++) {
        const r = await tokenRequest(legit, CLIENTS.full.client_id, CLIENTS.full.client_secret);
        legitStatuses.push(r.status);
      }
      // A client that never authenticated before is served too (its turn comes round-robin).
      const fresh = await tokenRequest(legit, CLIENTS.other.client_id, CLIENTS.other.client_secret);
      expect(fresh.status).toBe(200);
    } finally {
      finish();
      await attackers.done;
      await legit.close();
    }
    expect(legitStatuses).toEqual(Array(20).fill(200));
    // Every attacking connection was refused (429) and got nothing but 401 and 429.
    for (const mine of attackers.statuses) {
      expect(mine).toContain(429);
      expect(mine.every((s) => s === 401 || s === 429)).toBe(true);
    }
    // Guesses were cut short: each address had at most its 10 failures, plus one per block that ended.
    const guesses = attackers.statuses.flat().filter((s) => s === 401).length;
    expect(guesses).toBeLessThan(16 * 20);
  });

  it("answers a blocked address 429 with Retry-After and the RFC 6749 error shape", async () => {
    const agent = connectionFrom("127.0.0.99");
    try {
      let last: Awaited<ReturnType<typeof tokenRequest>> | undefined;
      for (let i = 0; i < 30 && last?.status !== 429; i++)
        last = await tokenRequest(agent, `nobody-${i}`, "x");
      expect(last?.status).toBe(429);
      expect(Number(last?.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(last?.body).toMatchObject({ error: "temporarily_unavailable" });
      expect(String(last?.body.detail)).toMatch(
        /^Too many failed client authentications\. Retry after \d+ seconds?\.$/,
      );
    } finally {
      await agent.close();
    }
  });
});

describe("request parsing over the wire", () => {
  it("answers a JSON body nested 30 000 levels deep with 422, and a huge one with 413", async () => {
    const deep = await svc.call("POST", "/v1/detection", {
      client: CLIENTS.full,
      headers: { "content-type": "application/json" },
      body: `${"[".repeat(30_000)}${"]".repeat(30_000)}`,
    });
    expect(deep.status).toBe(422);
    expect(deep.body.detail[0].loc).toEqual(["body"]);
    const huge = await svc.call("POST", "/v1/detection", {
      client: CLIENTS.full,
      json: { source_url: `https://x.example/${"a".repeat(1_000_000)}`, doc_type: "invoice", region: "US" },
    });
    expect(huge.status).toBe(413);
    expect((await svc.call("GET", "/healthz")).status).toBe(200);
  });
});

describe("the clients file, edited while the service runs", () => {
  /** Resolves once `check` holds (the service polls and watches the file); a generous guard against hangs. */
  async function until(check: () => Promise<boolean>, what: string) {
    const guard = Date.now() + 60_000;
    while (!(await check())) {
      if (Date.now() > guard) throw new Error(`never happened: ${what}\n${svc.log.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("refuses tokens of a removed client at once, keeps the others, and survives a malformed edit", async () => {
    const auditor = await svc.token(CLIENTS.readonly);
    expect((await svc.call("GET", "/v1/detection", { token: auditor })).status).toBe(200);
    const rest = Object.values(CLIENTS).filter((c) => c !== CLIENTS.readonly);
    await writeFile(svc.clientsFile, JSON.stringify({ clients: rest }));
    await until(
      async () => (await svc.call("GET", "/v1/detection", { token: auditor })).status === 401,
      "the removed client's token is refused",
    );
    const refused = await svc.call("GET", "/v1/detection", { token: auditor });
    expect(refused.body).toEqual({ detail: "Invalid bearer token" });
    const again = await tokenRequest(
      connectionFrom("127.0.0.50"),
      CLIENTS.readonly.client_id,
      CLIENTS.readonly.client_secret,
    );
    expect(again.status).toBe(401);
    expect((await svc.call("GET", "/v1/detection", { client: CLIENTS.full })).status).toBe(200);

    // A broken edit keeps the clients in use (and the service logs an error).
    await writeFile(svc.clientsFile, "{ not json");
    await until(async () => /clients file is not valid/.test(svc.log), "the service reports the broken file");
    expect((await svc.call("GET", "/v1/detection", { client: CLIENTS.full })).status).toBe(200);
    expect((await svc.call("GET", "/v1/detection", { token: auditor })).status).toBe(401);

    // Putting the client back lets it fetch a new token; the token issued before its removal stays void
    // (issue 25: a removed client's credentials are revoked, not suspended).
    await writeFile(svc.clientsFile, JSON.stringify({ clients: Object.values(CLIENTS) }));
    await until(async () => {
      const fresh = await tokenRequest(
        connectionFrom("127.0.0.51"),
        CLIENTS.readonly.client_id,
        CLIENTS.readonly.client_secret,
      );
      const token = fresh.body.access_token;
      return (
        fresh.status === 200 &&
        typeof token === "string" &&
        (await svc.call("GET", "/v1/detection", { token })).status === 200
      );
    }, "the restored client gets a new token that works");
    expect((await svc.call("GET", "/v1/detection", { token: auditor })).status).toBe(401);
  });
});
