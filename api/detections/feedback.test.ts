import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FEEDBACK, feedbackKeys } from "../../core/feedback.js";
import { readStored } from "../../core/stored.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";
import { completeForAttestation } from "../testdata/attestation-kit.js";
import { createDetection, sampleChecks } from "../testdata/evidence-kit.js";

const BYTES = new TextEncoder().encode("%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");

let h: Harness;
let alice: string;
beforeAll(async () => {
  h = await createHarness({
    clients: [
      { client_id: "alice", client_secret: "alice-secret", scopes: ["DocumentVerification:*"] },
      { client_id: "bob", client_secret: "bob-secret", scopes: ["DocumentVerification:detections:*"] },
      {
        client_id: "reader",
        client_secret: "reader-secret",
        scopes: ["DocumentVerification:detections:get"],
      },
      {
        client_id: "labeller",
        client_secret: "labeller-secret",
        scopes: ["DocumentVerification:detections:feedback"],
      },
    ],
  });
  alice = await h.token("alice");
});
afterAll(() => h.close());

const put = (id: string, body: unknown, token = alice) =>
  call(h, "PUT", `/v1/detection/${id}/feedback`, { token, body });

describe("PUT /v1/detection/{id}/feedback", () => {
  it("keeps the label, note and reviewer (the caller by default) with the fired codes, and lists it under the client", async () => {
    const id = await createDetection(h, alice);
    await completeForAttestation(h, id, BYTES, sampleChecks(), { score: 91 });
    const r = await put(id, { label: "confirmed_fraud", note: "called the bank" });
    expect(r.status).toBe(204);
    expect(r.body).toBe("");
    const read = await readStored(h.deps.objects, h.deps.bucket, FEEDBACK, id);
    expect(read.kind).toBe("ok");
    if (read.kind !== "ok") return;
    expect(read.value).toMatchObject({
      detection: id,
      clientId: "alice",
      label: "confirmed_fraud",
      note: "called the bank",
      reviewer: "alice",
      score: 91,
      docType: "bank_statement",
    });
    expect(read.value.fired.map((f) => `${f.check}:${f.code}`)).toContain(
      "layout.overlay:text_covered_and_replaced",
    );
    const markers = [];
    for await (const o of h.deps.objects.list(h.deps.bucket, feedbackKeys.markerPrefix("alice")))
      markers.push(o.key);
    expect(markers).toContain(feedbackKeys.marker("alice", id));

    // A second PUT replaces the first; a named reviewer is kept.
    expect((await put(id, { label: "genuine", reviewer: "j.smith" })).status).toBe(204);
    const again = await readStored(h.deps.objects, h.deps.bucket, FEEDBACK, id);
    expect(again.kind === "ok" && again.value).toMatchObject({ label: "genuine", reviewer: "j.smith" });
    expect(again.kind === "ok" && again.value.note).toBeUndefined();
  });

  it("answers 404 for another client's detection and for an unknown one", async () => {
    const id = await createDetection(h, alice);
    const bob = await h.token("bob");
    const r = await put(id, { label: "genuine" }, bob);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ detail: "Detection not found" });
    expect((await put("det-01jd5x9q3m8w2v7k4c6b0n1r2t", { label: "genuine" })).status).toBe(404);
    const read = await readStored(h.deps.objects, h.deps.bucket, FEEDBACK, id);
    expect(read.kind).toBe("missing");
  });

  it("answers 422 for a bad body, naming the field", async () => {
    const id = await createDetection(h, alice);
    const bad = await put(id, { label: "fraud" });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "label"]);
    const extra = await put(id, { label: "genuine", score: 3 });
    expect(extra.status).toBe(422);
    expect(extra.body.detail[0].type).toBe("extra_forbidden");
    const long = await put(id, { label: "genuine", note: "x".repeat(2001) });
    expect(long.status).toBe(422);
    expect(long.body.detail[0].loc).toEqual(["body", "note"]);
    expect((await put(id, { note: "no label" })).status).toBe(422);
  });

  it("answers hostile bodies (deep, large, malformed) with a bounded 413 or 422, never a 500", async () => {
    const id = await createDetection(h, alice);
    const raw = (body: string) =>
      call(h, "PUT", `/v1/detection/${id}/feedback`, {
        token: alice,
        raw: body,
        headers: { "content-type": "application/json" },
      });
    for (const body of [
      `${"[".repeat(3000)}${"]".repeat(3000)}`,
      `${'{"a":'.repeat(30_000)}1${"}".repeat(30_000)}`,
      JSON.stringify({ label: "genuine", note: "x".repeat(100_000) }),
      '{"label": "genuine"',
    ]) {
      const r = await raw(body);
      expect([413, 422]).toContain(r.status);
      expect(JSON.stringify(r.body).length).toBeLessThan(4096);
    }
    expect((await readStored(h.deps.objects, h.deps.bucket, FEEDBACK, id)).kind).toBe("missing");
  });

  it("needs the feedback scope, which DocumentVerification:detections:* covers", async () => {
    const bobId = await createDetection(h, await h.token("bob"));
    expect((await put(bobId, { label: "unsure" }, await h.token("bob"))).status).toBe(204);
    const reader = await h.token("reader");
    const r = await put(bobId, { label: "genuine" }, reader);
    expect(r.status).toBe(403);
    expect(r.body.detail).toBe("Missing required scopes: DocumentVerification:detections:feedback");
    const labeller = await h.token("labeller");
    // The scope alone lets it label its own detections only: bob's is 404 to it.
    expect((await put(bobId, { label: "genuine" }, labeller)).status).toBe(404);
  });
});
