import { writeFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Detection } from "../../core/detection.js";
import { watchClientsFile } from "../auth/clients-reload.js";
import { recordClientChanges } from "../auth/revocations.js";
import { call, createHarness, type Harness, TEST_CLIENTS, TEST_SCRYPT_COST } from "../testdata/app-kit.js";
import { completeWithEvidence, createDetection } from "../testdata/evidence-kit.js";

let h: Harness;
let close: (() => void) | undefined;
afterEach(async () => {
  close?.();
  close = undefined;
  await h?.close();
});

async function reviewLink(id: string, token: string): Promise<string> {
  const r = await call(h, "GET", `/v1/detection/${id}/evidence`, { token });
  expect(r.status).toBe(200);
  const u = new URL(r.body.review_url as string);
  return `${u.pathname}${u.search}`;
}
const page = async (link: string) => {
  const res = await h.app.request(link);
  return { status: res.status, text: await res.text() };
};

describe("the reviewer page shows a file name's invisible characters, the API returns the name as it is", () => {
  it("bidi overrides and zero-width characters become [U+XXXX] markers on the page", async () => {
    h = await createHarness();
    const alice = await h.token("alice");
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const name = "invoice\u202Efdp.exe\u200B\u2066x\u2069.pdf";
    const d = (await h.store.get(id)) as Detection;
    await h.store.updateStatus({
      ...d,
      status: { ...d.status!, document: { ...d.status!.document!, filename: name } },
    });
    const r = await page(await reviewLink(id, alice));
    expect(r.status).toBe(200);
    expect(r.text).toContain("invoice[U+202E]fdp.exe[U+200B][U+2066]x[U+2069].pdf");
    expect(r.text).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f]/);
    const api = await call(h, "GET", `/v1/detection/${id}`, { token: alice });
    expect(api.body.filename).toBe(name);
  });
});

describe("a removed client's reviewer links stop working, and adding it back does not revive them", () => {
  it("refuses the link once the client is gone and after it is back; a link made after works", async () => {
    h = await createHarness();
    const file = path.join(h.dir, "clients.json");
    await writeFile(file, JSON.stringify({ clients: TEST_CLIENTS }));
    const watched = await watchClientsFile(file, {
      log: pino({ level: "silent" }),
      cost: TEST_SCRYPT_COST,
      watch: false,
      pollMs: 3_600_000,
      onChange: recordClientChanges(h.deps.revocations, () => h.clock.now()),
    });
    close = () => watched.close();
    h.deps.clients = watched;
    const alice = await h.token("alice");
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const link = await reviewLink(id, alice);
    expect((await page(link)).status).toBe(200);

    h.clock.advance(1000);
    await writeFile(file, JSON.stringify({ clients: TEST_CLIENTS.filter((c) => c.client_id !== "alice") }));
    expect(await watched.reload()).toBe(true);
    expect((await page(link)).status).toBe(404);

    h.clock.advance(1000);
    await writeFile(file, JSON.stringify({ clients: TEST_CLIENTS }));
    expect(await watched.reload()).toBe(true);
    expect((await page(link)).status).toBe(404);
    const r = await call(h, "GET", `/v1/detection/${id}`, { token: alice });
    expect(r.status).toBe(401);

    h.clock.advance(1000);
    const again = await h.token("alice");
    expect((await page(await reviewLink(id, again))).status).toBe(200);
  });
});
