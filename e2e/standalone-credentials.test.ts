import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENTS, type Service, startService, type TestClient, until } from "./harness.js";

/**
 * Credentials that stop when they should (issue 25, scope 5), on the real standalone service with its
 * clients file changed under it: a token minted before a secret rotation is refused once the file is
 * reloaded; a removed client's tokens and upload URLs stop working, and adding the client back (same
 * secret) does not revive them, also after a restart.
 */
let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.dispose();
});

async function writeClients(clients: TestClient[]): Promise<void> {
  await writeFile(svc.clientsFile, JSON.stringify({ clients }));
}

/** POST /token's status and token (no cache: every call asks the service). */
async function mint(client: TestClient): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${svc.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: client.client_id,
      client_secret: client.client_secret,
    }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, token: body.access_token };
}

const list = async (token: string) => (await svc.call("GET", "/v1/detection", { token })).status;

/** Waits for the service to have read the clients file: `client` can (or cannot) get a token. */
const reloaded = (client: TestClient, status: 200 | 401) =>
  until(
    `POST /token for ${client.client_id} answering ${status}`,
    () => mint(client),
    (r) => r.status === status,
  );

const put = async (url: string) =>
  (
    await fetch(url, {
      method: "PUT",
      headers: { "content-type": "application/pdf" },
      body: "%PDF-1.7\n%%EOF\n",
    })
  ).status;

describe("credentials follow the clients file", () => {
  it("a token minted before the client's secret changed is refused once the file is reloaded", async () => {
    const before = (await mint(CLIENTS.full)).token!;
    expect(await list(before)).toBe(200);
    const rotated = { ...CLIENTS.full, client_secret: "s3cret-acme-ROTATED-9876543210" };
    await writeClients([rotated, ...Object.values(CLIENTS).filter((c) => c !== CLIENTS.full)]);
    await reloaded(rotated, 200);
    const r = await svc.call("GET", "/v1/detection", { token: before });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ detail: "Invalid bearer token" });
    expect((await mint(CLIENTS.full)).status).toBe(401);
    expect(await list((await mint(rotated)).token!)).toBe(200);
  });

  it("a removed client's tokens and upload URLs stop, and adding it back (same secret) revives neither, also after a restart", async () => {
    const client = CLIENTS.other;
    const old = (await mint(client)).token!;
    expect(await list(old)).toBe(200);
    const upload = await svc.call("POST", "/v1/uploads", { token: old, json: { filename: "a.pdf" } });
    expect(upload.status).toBe(201);
    const oldUrl = upload.body.upload_url as string;
    const others = Object.values(CLIENTS).filter((c) => c !== client && c !== CLIENTS.full);

    await writeClients(others);
    await reloaded(client, 401);
    expect(await list(old)).toBe(401);
    expect(await put(oldUrl)).toBe(403);

    await writeClients([...others, client]);
    await reloaded(client, 200);
    expect(await list(old)).toBe(401);
    const refused = await fetch(oldUrl, { method: "PUT", body: "%PDF-1.7\n%%EOF\n" });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /no longer registered as it was then/,
    );

    // A token and an upload made after the client came back work.
    const fresh = (await mint(client)).token!;
    expect(await list(fresh)).toBe(200);
    const second = await svc.call("POST", "/v1/uploads", { token: fresh, json: { filename: "b.pdf" } });
    expect(await put(second.body.upload_url)).toBe(200);

    // The removal is remembered across a restart (the signing key, and so the old token's signature, stay).
    await svc.stop();
    await svc.start();
    expect(await list(old)).toBe(401);
    const moved = (u: string) => `${svc.url}${new URL(u).pathname}${new URL(u).search}`; // PORT=0: a new port
    expect(await put(moved(oldUrl))).toBe(403);
    expect(await list(fresh)).toBe(200);
  });
});
