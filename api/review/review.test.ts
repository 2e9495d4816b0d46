import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveDetection } from "../../core/archive.js";
import type { Detection } from "../../core/detection.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";
import { completeWithEvidence, createDetection, sampleChecks } from "../testdata/evidence-kit.js";
import { esc, NOT_FOUND_HTML, REVIEW_CSP } from "./page.js";
import { checkReviewToken, reviewToken, reviewTokenClient } from "./signing.js";

let h: Harness;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.close());

const HOSTILE = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>"'&`;

/** The path and query of a detection's review_url. */
async function reviewLink(id: string, token = alice): Promise<string> {
  const r = await call(h, "GET", `/v1/detection/${id}/evidence`, { token });
  const u = new URL(r.body.review_url as string);
  return `${u.pathname}${u.search}`;
}

async function get(path: string) {
  const res = await h.app.request(path);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("the review link's token", () => {
  const hmac = (s: string) => createHmac("sha256", "k").update(s).digest("hex");
  it("opens its detection, for its client, until it expires; nothing else", () => {
    const t = reviewToken("det-a", "alice", 1000, hmac);
    expect(checkReviewToken(t, "det-a", "alice", 999, hmac)).toBe(true);
    expect(checkReviewToken(t, "det-a", "alice", 1000, hmac)).toBe(true);
    expect(checkReviewToken(t, "det-a", "alice", 1001, hmac)).toBe(false);
    expect(checkReviewToken(t, "det-b", "alice", 999, hmac)).toBe(false);
    expect(checkReviewToken(t, "det-a", "bob", 999, hmac)).toBe(false);
    // a longer lifetime cannot be claimed: the expiry is signed
    expect(checkReviewToken(t.replace(/^1000/, "9999"), "det-a", "alice", 999, hmac)).toBe(false);
    for (const bad of [undefined, "", "1000", "x.y", `${t}0`, t.toUpperCase()])
      expect(checkReviewToken(bad, "det-a", "alice", 999, hmac)).toBe(false);
  });

  it("names its client, so an archived detection is found by its owner; a changed name breaks the signature", () => {
    const t = reviewToken("det-a", "alice@example.com", 1000, hmac);
    expect(reviewTokenClient(t)).toBe("alice@example.com");
    const [exp, , sig] = t.split(".");
    const forged = `${exp}.${Buffer.from("bob").toString("base64url")}.${sig}`;
    expect(reviewTokenClient(forged)).toBe("bob");
    expect(checkReviewToken(forged, "det-a", "bob", 999, hmac)).toBe(false);
    expect(reviewTokenClient("1000.abc")).toBeUndefined();
  });
});

describe("an archived detection (core/archive.ts)", () => {
  it("keeps its evidence, its page images and its review link once its resource is gone", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, sampleChecks());
    const before = await call(h, "GET", `/v1/detection/${id}/evidence`, { token: alice });
    // What the reconciler's archive pass does: the record, the finalizer off, the resource deleted.
    const d = (await h.store.get(id)) as Detection;
    await archiveDetection(h.deps.objects, h.deps.bucket, d, { now: h.clock.now() });
    const updated = await h.store.update({
      ...structuredClone(d),
      metadata: { ...structuredClone(d.metadata), finalizers: [] },
    });
    await h.store.delete(updated.metadata.name);
    expect(await h.store.get(id)).toBeUndefined();

    const after = await call(h, "GET", `/v1/detection/${id}/evidence`, { token: alice });
    expect(after.status).toBe(200);
    expect(after.body.findings).toEqual(before.body.findings);
    expect((await call(h, "GET", `/v1/detection/${id}/evidence`, { token: bob })).status).toBe(404);
    const img = await call(h, "GET", `/v1/detection/${id}/evidence/pages/1.png`, { token: alice });
    expect(img.status).toBe(200);
    const link = await reviewLink(id);
    const page = await get(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain(esc("£4,018.52 → £5,018.52, page 1"));
    const token = new URL(`http://x${link}`).searchParams.get("token") as string;
    expect((await h.app.request(`/review/${id}/pages/1.png?token=${encodeURIComponent(token)}`)).status).toBe(
      200,
    );
  });
});

describe("GET /review/{id}", () => {
  it("shows the score band, the groups, the pages and the checks, under a CSP that allows no other origin", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, sampleChecks(), { firstSaved: [1] });
    const link = await reviewLink(id);
    const r = await get(link);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("content-security-policy")).toBe(REVIEW_CSP);
    expect(REVIEW_CSP).toMatch(/default-src 'none'/);
    expect(REVIEW_CSP).not.toMatch(/https?:|\*|unsafe/);
    expect(r.headers.get("referrer-policy")).toBe("no-referrer");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.text).toContain("High risk");
    expect(r.text).toContain("fraud score 88/100");
    expect(r.text).toContain(esc("£4,018.52 → £5,018.52, page 1"));
    expect(r.text).toContain('data-group="1"');
    expect(r.text).toContain("As first saved (revision 1)");
    expect(r.text).toContain("text.arithmetic");
    // every resource the page names is the service's own (relative), signed with the link's token
    const token = new URL(`http://x${link}`).searchParams.get("token") as string;
    const srcs = [...r.text.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);
    expect(srcs.sort()).toEqual(
      [
        `/review/${id}/pages/1-first-saved.png?token=${encodeURIComponent(token)}`,
        `/review/${id}/pages/1.png?token=${encodeURIComponent(token)}`,
      ].map(esc),
    );
    for (const src of srcs) {
      const img = await h.app.request(src.replace(/&amp;/g, "&"));
      expect(img.status).toBe(200);
      expect(img.headers.get("content-type")).toBe("image/png");
    }
  });

  it("writes document text as text: a hostile value is escaped, never markup", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, sampleChecks(HOSTILE));
    const r = await get(await reviewLink(id));
    expect(r.status).toBe(200);
    expect(r.text).not.toContain("<script>document");
    expect(r.text).not.toContain("<img src=x");
    expect(r.text).toContain(esc(HOSTILE).slice(0, 40));
    // the only script is the page's own
    expect(r.text.match(/<script/g)).toHaveLength(1);
  });

  it("a wrong, expired, other-detection or other-client link, or none, is the same 404 that reveals nothing", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const other = await createDetection(h, bob);
    await completeWithEvidence(h, other);
    const link = await reviewLink(id);
    const token = new URL(`http://x${link}`).searchParams.get("token") as string;
    const bobsToken = new URL(`http://x${await reviewLink(other, bob)}`).searchParams.get("token") as string;
    const refused = [
      `/review/${id}`,
      `/review/${id}?token=`,
      `/review/${id}?token=${token.slice(0, -1)}${token.endsWith("0") ? "1" : "0"}`,
      `/review/${id}?token=${bobsToken}`,
      `/review/${other}?token=${token}`,
      `/review/det-01jd5x9q3m8w2v7k4c6b0n1r2t?token=${token}`,
      `/review/NOT_AN_ID?token=${token}`,
      `/review/${id}/pages/1.png?token=${bobsToken}`,
      `/review/${id}/pages/1.png`,
      `/review/${id}/pages/9.png?token=${token}`,
      `/review/${id}/pages/..%2F..%2Fdocuments.png?token=${token}`,
    ];
    for (const path of refused) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(r.text, path).toBe(NOT_FOUND_HTML);
    }
    expect((await get(link)).status).toBe(200);
    h.clock.advance(901_000);
    const expired = await get(link);
    expect(expired.status).toBe(404);
    expect(expired.text).toBe(NOT_FOUND_HTML);
    expect((await get(`/review/${id}/pages/1.png?token=${token}`)).status).toBe(404);
  });

  it("a detection being deleted closes its links", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const link = await reviewLink(id);
    await call(h, "DELETE", `/v1/detection/${id}`, { token: alice });
    expect((await get(link)).status).toBe(404);
  });

  it("after the retention period the page keeps the score and says the evidence is gone; images 404", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const link = await reviewLink(id);
    const stored = (await h.store.get(id)) as Detection;
    await h.store.updateStatus({
      ...stored,
      status: { ...stored.status, verdict: null, prunedAt: h.clock.now().toISOString() },
    });
    const r = await get(link);
    expect(r.status).toBe(200);
    expect(r.text).toContain("removed after the retention period");
    expect(r.text).toContain("fraud score 88/100");
    const token = new URL(`http://x${link}`).searchParams.get("token") as string;
    expect((await get(`/review/${id}/pages/1.png?token=${token}`)).status).toBe(404);
  });
});
