import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENTS, type Service, startService } from "./harness.js";

/**
 * Idempotent creates on the real standalone service (issue 25, scope 4): a retried create with the same
 * Idempotency-Key creates one detection, also across a crash of the service; another request with the key
 * is 422; keys are per client; a malformed key is 400.
 */
let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => {
  await svc?.dispose();
});

const body = (n: number) => ({
  source_url: `https://documents.example.invalid/statement-${n}.pdf`,
  doc_type: "bank_statement",
  region: "GB",
});

async function listIds(client = CLIENTS.full): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const r = await svc.call("GET", `/v1/detection?limit=200${cursor ? `&cursor=${cursor}` : ""}`, {
      client,
    });
    expect(r.status).toBe(200);
    for (const d of r.body.items as { id: string }[]) ids.push(d.id);
    cursor = r.body.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

describe("Idempotency-Key on POST /v1/detection (standalone)", () => {
  it("a retry with the same key and body answers the same detection and creates nothing", async () => {
    const key = randomUUID();
    const before = await listIds();
    const first = await svc.create(CLIENTS.full, body(1), { "Idempotency-Key": key });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await svc.create(CLIENTS.full, body(1), { "Idempotency-Key": key });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get("location")).toBe(`/v1/detection/${first.body.id}`);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const after = await listIds();
    expect(after.filter((id) => !before.includes(id))).toEqual([first.body.id]);
  });

  it("the same key with another body is 422 idempotency_key_reused and creates nothing", async () => {
    const key = randomUUID();
    const first = await svc.create(CLIENTS.full, body(2), { "Idempotency-Key": key });
    expect(first.status).toBe(202);
    const before = await listIds();
    const other = await svc.create(CLIENTS.full, body(3), { "Idempotency-Key": key });
    expect(other.status).toBe(422);
    expect(other.body.detail[0]).toMatchObject({
      type: "idempotency_key_reused",
      loc: ["header", "idempotency-key"],
    });
    expect(other.body.detail[0].msg).toMatch(/already used with a different request/);
    expect(await listIds()).toEqual(before);
  });

  it("concurrent requests with one key create one detection (the others replay it or are 409)", async () => {
    const key = randomUUID();
    const before = await listIds();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => svc.create(CLIENTS.full, body(4), { "Idempotency-Key": key })),
    );
    for (const a of answers) expect([202, 409], JSON.stringify(a.body)).toContain(a.status);
    const ids = new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id));
    expect(ids.size).toBe(1);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(Number(a.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    const created = (await listIds()).filter((id) => !before.includes(id));
    expect(created).toEqual([...ids]);
  });

  it("keys are per client: another client's same key creates its own detection", async () => {
    const key = randomUUID();
    const mine = await svc.create(CLIENTS.full, body(5), { "Idempotency-Key": key });
    const theirs = await svc.create(CLIENTS.other, body(5), { "Idempotency-Key": key });
    expect(mine.status).toBe(202);
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(mine.body.id);
    // …and a different body under that client's key is still its own business.
    const theirsAgain = await svc.create(CLIENTS.other, body(5), { "Idempotency-Key": key });
    expect(theirsAgain.body.id).toBe(theirs.body.id);
  });

  it("a malformed key is 400 with what to send instead", async () => {
    for (const bad of ["", "   ", "x".repeat(256), "naïve-key", "two words", '"unterminated']) {
      const r = await svc.create(CLIENTS.full, body(6), { "Idempotency-Key": bad });
      expect(r.status, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.detail).toMatch(/^The Idempotency-Key header .*such as a UUID/);
    }
    const quoted = await svc.create(CLIENTS.full, body(6), { "Idempotency-Key": `"${randomUUID()} a"` });
    expect(quoted.status).toBe(202);
  });

  it("a retry after the service crashed (kill -9) and restarted answers the same detection", async () => {
    const key = randomUUID();
    const first = await svc.create(CLIENTS.full, body(7), { "Idempotency-Key": key });
    expect(first.status).toBe(202);
    await svc.stop("SIGKILL");
    await svc.start();
    const before = await listIds();
    const again = await svc.create(CLIENTS.full, body(7), { "Idempotency-Key": key });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(await listIds()).toEqual(before);
  });
});
