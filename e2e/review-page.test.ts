/**
 * The reviewer page in a real browser against the running standalone service: Debian's chromium (installed
 * by `npm run test:setup`) driven by playwright-core. Tampered documents go through the whole service; the
 * page opened by the evidence's review_url must load with no request leaving the service (the browser's
 * request log), show the headline groups, highlight a group's box on click, display a hostile document
 * text as text, and show an expired or another client's link a 404. Screenshots go to
 * .test-artifacts/review-page/ (gitignored).
 */
import { createHmac } from "node:crypto";
import path from "node:path";
import { PDFDocument, rgb, StandardFonts } from "pdf-lib";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, chromiumAvailable, launchChromium } from "./browser.js";
import { makeDocument } from "../fixtures/documents.js";
import { tamperRevision } from "../fixtures/revisions.js";
import { makeTextTamperedPdf } from "../fixtures/tampered-text.js";
import { CLIENTS, type Service, startFileServer, startService } from "./harness.js";

const SIGNING_KEY = "review-page-e2e-signing-key-0123456789abcdef";
// Short enough to be quoted whole in a finding (60 characters), and as wide as the text it replaces.
const HOSTILE = "<img src=x onerror=__pwned=1><script>__pwned=2</script>";

/** An invoice with a reference covered by a white box and hostile text printed in its place. */
async function hostileInvoice(): Promise<Uint8Array> {
  const doc = await PDFDocument.load(await makeDocument({ seed: 4, docType: "invoice", region: "GB" }));
  const page = doc.getPage(0);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText("Reference: 4471-2207-9931-0042", { x: 300, y: 260, size: 10, font });
  page.drawRectangle({ x: 296, y: 256, width: 260, height: 14, color: rgb(1, 1, 1) });
  page.drawText(HOSTILE, { x: 300, y: 260, size: 8, font });
  return doc.save({ useObjectStreams: false });
}

describe.skipIf(!chromiumAvailable)(
  chromiumAvailable
    ? "the reviewer page in chromium"
    : "the reviewer page in chromium (skipped: /usr/bin/chromium is missing; run `npm run test:setup`)",
  () => {
    let svc: Service;
    let files: Awaited<ReturnType<typeof startFileServer>>;
    let browser: Browser;
    let page: Page;
    const offsite: string[] = [];
    const docs: Record<string, { id: string; review: string; evidence: Record<string, unknown> }> = {};

    async function detect(name: string, docType: string, region: string, client = CLIENTS.full, file = name) {
      const created = await svc.create(client, {
        source_url: files.url(`/${file}.pdf`),
        doc_type: docType,
        region,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      const d = await svc.waitTerminal(client, created.body.id);
      expect(d.status, `${name}: ${JSON.stringify(d)}\n${svc.log.slice(-3000)}`).toBe("COMPLETED");
      const ev = await svc.call("GET", `/v1/detection/${created.body.id}/evidence`, { client });
      expect(ev.status).toBe(200);
      docs[name] = { id: created.body.id, review: ev.body.review_url, evidence: ev.body };
    }

    beforeAll(async () => {
      const whiteBox = await makeTextTamperedPdf(7, "white_box_overlay");
      const base = await makeDocument({ seed: 3, docType: "bank_statement", region: "GB", pages: 2 });
      const incremental = await tamperRevision(base, "amount_edit", { page: 1 });
      files = await startFileServer({
        "/white-box.pdf": { body: whiteBox.bytes },
        "/incremental.pdf": { body: incremental.bytes },
        "/hostile.pdf": { body: await hostileInvoice() },
      });
      svc = await startService({
        env: {
          DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
          DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
          DOCVERIFY_TOKEN_SIGNING_KEY: SIGNING_KEY,
        },
      });
      await detect("white-box", whiteBox.docType, whiteBox.region);
      await detect("incremental", "bank_statement", "GB");
      await detect("hostile", "invoice", "GB");
      await detect("foreign", "bank_statement", "GB", CLIENTS.other, "incremental");

      browser = await launchChromium("review-page", { width: 1400, height: 1000 });
      page = browser.page;
      page.on("request", (req) => {
        if (new URL(req.url()).origin !== svc.url) offsite.push(req.url());
      });
    });

    afterAll(async () => {
      await browser?.close();
      await svc?.dispose();
      await files?.close();
    });

    it("loads from the service alone, shows the groups, and a click highlights the group's box", async () => {
      const { review } = docs["white-box"]!;
      const images: number[] = [];
      page.on("response", (res) => {
        if (/\/pages\/\d+(-first-saved)?\.png/.test(res.url())) images.push(res.status());
      });
      const res = await page.goto(review);
      expect(res?.status()).toBe(200);
      await page.waitForLoadState("networkidle");
      expect(offsite).toEqual([]);
      expect(images.length).toBeGreaterThan(0);
      expect(images.every((s) => s === 200)).toBe(true);
      const csp = res?.headers()["content-security-policy"] ?? "";
      expect(csp).toContain("default-src 'none'");

      await expect(page.locator("#band").textContent()).resolves.toMatch(/High risk|Moderate risk/);
      const groups = page.locator("button.group");
      expect(await groups.count()).toBeGreaterThan(0);
      await expect(groups.first().textContent()).resolves.toMatch(/→/);
      await page.screenshot({ path: path.join(browser.artifacts, "1-review-page.png"), fullPage: false });

      await groups.first().click();
      const box = page.locator('.box[data-group="1"]').first();
      await expect(box.getAttribute("class")).resolves.toContain("hl");
      await page.waitForFunction(
        `(() => { const b = document.querySelector('.box[data-group="1"]')?.getBoundingClientRect();
          return !!b && b.top >= 0 && b.bottom <= window.innerHeight; })()`,
      );
      const rect = await box.boundingBox();
      expect(rect && rect.width > 5 && rect.height > 5).toBe(true);
      await expect(groups.first().getAttribute("class")).resolves.toContain("active");
      await page.screenshot({
        path: path.join(browser.artifacts, "2-group-highlighted.png"),
        fullPage: false,
      });
      await page.screenshot({ path: path.join(browser.artifacts, "3-full-page.png"), fullPage: true });
    });

    it("shows the page as first saved beside the page as submitted for an incremental edit", async () => {
      await page.goto(docs.incremental!.review);
      await page.waitForLoadState("networkidle");
      const pair = page.locator(".pair").first();
      await expect(pair.locator("h3").allTextContents()).resolves.toEqual([
        "As first saved (revision 1)",
        "As submitted",
      ]);
      const imgs = pair.locator("img");
      expect(await imgs.count()).toBe(2);
      const widths = (await page.evaluate(
        "Array.from(document.querySelectorAll('.pair')[0].querySelectorAll('img')).map((i) => i.naturalWidth)",
      )) as number[];
      expect(widths).toHaveLength(2);
      for (const w of widths) expect(w).toBeGreaterThan(100);
      const region = page.locator("button.group", { hasText: "→" }).first();
      await region.click();
      expect(await pair.locator(".box.hl").count()).toBe(2);
      await pair.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(browser.artifacts, "4-before-after.png"), fullPage: false });
      expect(offsite).toEqual([]);
    });

    it("displays a hostile document text as text: nothing of it runs or becomes markup", async () => {
      await page.goto(docs.hostile!.review);
      await page.waitForLoadState("networkidle");
      await page.screenshot({ path: path.join(browser.artifacts, "5-hostile-text.png"), fullPage: false });
      const shown = await page.locator("body").textContent();
      expect(shown, JSON.stringify(docs.hostile?.evidence).slice(0, 3000)).toContain(
        "<script>__pwned=2</script>",
      );
      await expect(page.evaluate("window.__pwned")).resolves.toBeUndefined();
      await expect(page.locator('img[src="x"]').count()).resolves.toBe(0);
      await expect(page.locator("script").count()).resolves.toBe(1);
      await page.screenshot({ path: path.join(browser.artifacts, "5-hostile-text.png"), fullPage: false });
    });

    it("an expired link, a tampered one and another client's link get the same 404", async () => {
      const { id, review } = docs["white-box"]!;
      const u = new URL(review);
      // A link the service itself would have minted, but expired a minute ago.
      const expires = Math.floor(Date.now() / 1000) - 60;
      const sig = createHmac("sha256", SIGNING_KEY)
        .update(`GET\n/review/${id}\n${CLIENTS.full.client_id}\n${expires}`)
        .digest("hex");
      const token = u.searchParams.get("token") as string;
      const foreign = docs.foreign
        ? new URL(docs.foreign.review).searchParams.get("token")
        : `${expires}.${"0".repeat(64)}`;
      const links = [
        `${u.origin}${u.pathname}?token=${expires}.${sig}`,
        `${u.origin}${u.pathname}?token=${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`,
        `${u.origin}${u.pathname}?token=${foreign}`,
      ];
      for (const [i, link] of links.entries()) {
        const res = await page.goto(link);
        expect(res?.status(), link).toBe(404);
        await expect(page.locator("h1").textContent()).resolves.toBe("This review link is not valid");
        if (i === 0) await page.screenshot({ path: path.join(browser.artifacts, "6-expired-link.png") });
      }
      expect(offsite).toEqual([]);
    });
  },
);
