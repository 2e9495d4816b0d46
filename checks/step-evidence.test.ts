/**
 * The reviewer's evidence of the check step, judged on the images themselves: each tampered fixture
 * records where it changed the document (PDF points), the stored PNG is decoded, its marks are found by
 * their colour, and the marked box must be the one the fixture recorded (placed on the image by the page
 * box and the image size, not by the finding's own bbox) — and there must be no box where nothing changed.
 */
import { readFile } from "node:fs/promises";
import sharp from "sharp";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { editedPhoto } from "../fixtures/tamper-image.js";
import { retypeAmountsOn } from "../fixtures/tamper-text.js";
import { appendRevision, makeFormPdf, tamperRevision } from "../fixtures/revisions.js";
import { makeTextTamperedPdf, type TextTamperKind } from "../fixtures/tampered-text.js";
import { type RpFixture, realProducerSet, type SetResult } from "../fixtures/real-producer/set.js";
import { toolAvailability } from "../fixtures/real-producer/tools.js";
import { judge } from "./check.js";
import { checkDocument, iou, marksIn, onRow, pointsToPixels } from "./testdata/evidence-kit.js";
import { createTestStepContext, type TestStepContext } from "./testdata/step-context.js";

let ctx: TestStepContext;
beforeAll(async () => {
  ctx = await createTestStepContext();
});
afterAll(() => ctx.cleanup());

describe.each<[TextTamperKind, number]>([
  ["white_box_overlay", 7],
  ["white_box_overlay", 12],
  ["amount_font_swap", 3],
  ["amount_font_swap", 21],
])("%s (seed %i): the altered value is boxed on the page image", (kind, seed) => {
  it("draws a box around the value the fixture altered, none elsewhere; the genuine original has none", async () => {
    const t = await makeTextTamperedPdf(seed, kind);
    const box = t.box as number[];
    expect(box).toBeDefined();
    const checked = await checkDocument(ctx, t.bytes, { docType: t.docType, region: t.region });
    const page = checked.manifest.pages.find((p) => p.number === t.page);
    expect(page?.image, JSON.stringify(checked.manifest.pages)).toBeTruthy();
    const png = (await checked.png(t.page)) as Buffer;
    const { width, height, marks } = await marksIn(png);
    expect(width).toBe(page?.image?.widthPx);
    expect(Math.max(width, height)).toBeLessThanOrEqual(2000);
    const expected = pointsToPixels(page!, box, width, height);
    const best = Math.max(...marks.map((m) => iou(m.inner, expected)));
    expect(best, JSON.stringify({ expected, marks })).toBeGreaterThanOrEqual(0.5);
    // No box where nothing changed: every box on the page is on the altered value's row (a check that
    // finds the sums broken points at the same row), and no other page carries a box.
    for (const m of marks) expect(onRow(m.inner, expected), JSON.stringify({ m, expected })).toBe(true);
    for (const p of checked.manifest.pages.filter((x) => x.number !== t.page && x.image)) {
      const others = await marksIn((await checked.png(p.number)) as Buffer);
      expect(others.marks, `page ${p.number}`).toEqual([]);
    }
    // The group of that box heads the list, with the value before → after.
    const group = checked.manifest.groups[0];
    expect(group?.severity).toBeGreaterThanOrEqual(7);
    expect(group?.pages).toEqual([t.page]);
    if (kind === "white_box_overlay") {
      expect(group?.before).toBe(t.original);
      expect(group?.after).toBe(t.replacement);
      expect(group?.headline).toContain(`${t.original} → ${t.replacement}`);
    }

    const genuine = await makeDocument({ seed, docType: t.docType, region: t.region });
    const clean = await checkDocument(ctx, genuine, { docType: t.docType, region: t.region });
    const imaged = clean.manifest.pages.filter((p) => p.image);
    for (const p of imaged) expect((await marksIn((await clean.png(p.number)) as Buffer)).marks).toEqual([]);
    expect(clean.manifest.groups.filter((g) => g.severity >= 2)).toEqual([]);
  });
});

describe("an incremental edit: the page as first saved next to the page as submitted", () => {
  it.each(["amount_edit", "overlay_edit"] as const)(
    "%s: both images mark the changed region where the fixture changed it, and only there",
    async (kind) => {
      const base = await makeDocument({ seed: 3, docType: "bank_statement", region: "GB", pages: 2 });
      const t = await tamperRevision(base, kind, { page: 1 });
      const checked = await checkDocument(ctx, t.bytes, { docType: "bank_statement", region: "GB" });
      const page = checked.manifest.pages.find((p) => p.number === 1)!;
      expect(page.image).toBeTruthy();
      expect(page.firstSaved).toMatchObject({ revision: 1 });

      const regions = checked.manifest.findings.filter((f) => f.code === "revision_changed_region");
      expect(regions.map((r) => r.page)).toEqual([1]);
      expect(regions[0]?.before).toBe(t.before);
      expect(regions[0]?.after).toBe(t.after);
      expect(regions[0]?.severity).toBeGreaterThanOrEqual(8);

      for (const version of ["first-saved", "submitted"] as const) {
        const { width, height, marks } = await marksIn((await checked.png(1, version)) as Buffer);
        const expected = pointsToPixels(page, t.box as number[], width, height);
        const best = Math.max(...marks.map((m) => iou(m.inner, expected)));
        expect(best, `${version} ${JSON.stringify({ expected, marks })}`).toBeGreaterThanOrEqual(0.5);
        if (version === "first-saved") {
          // The first-saved image marks only the changed regions: exactly the one the fixture made.
          expect(marks).toHaveLength(1);
        } else {
          for (const m of marks) expect(onRow(m.inner, expected)).toBe(true);
        }
      }
      // Page 2 changed nothing: no first-saved image of it.
      expect(checked.manifest.pages.find((p) => p.number === 2)?.firstSaved ?? null).toBeNull();

      const clean = await checkDocument(ctx, base, { docType: "bank_statement", region: "GB" });
      expect(clean.manifest.findings.filter((f) => f.code === "revision_changed_region")).toEqual([]);
      expect(clean.manifest.pages.filter((p) => p.firstSaved)).toEqual([]);
    },
  );

  it("a region changed by a permitted revision (a form filled in) is evidence with severity 0", async () => {
    const form = await makeFormPdf(5);
    const filled = await appendRevision(form, (doc) => {
      const field = doc.getForm().getTextField("requested_amount");
      field.setText("92,500.00");
      doc.getForm().updateFieldAppearances();
    });
    const checked = await checkDocument(ctx, filled, { docType: "loan_application", region: "GB" });
    const regions = checked.manifest.findings.filter((f) => f.code === "revision_changed_region");
    expect(regions.length).toBeGreaterThan(0);
    for (const r of regions) {
      expect(r.severity).toBe(0);
      expect(r.evidence?.permitted).toBe(true);
    }
    expect(regions.some((r) => r.after?.includes("92,500.00"))).toBe(true);
    // The regions never score: the check is judged on its other findings alone.
    const revisions = checked.result.checks.find((c) => c.checkId === "pdf.revisions")!;
    const others = revisions.findings.filter((f) => f.code !== "revision_changed_region");
    expect(revisions.severity).toBe(judge(others).severity);
    // Shown all the same: the page and its first save are rendered with the region marked, inside the
    // form field's widget (its /Rect as the fixture made it).
    const page = checked.manifest.pages.find((p) => p.number === 1)!;
    expect(page.image && page.firstSaved).toBeTruthy();
    const { marks, width, height } = await marksIn((await checked.png(1, "first-saved")) as Buffer);
    expect(marks.length).toBeGreaterThan(0);
    const widget = pointsToPixels(page, [380, 120, 500, 138], width, height);
    for (const m of marks) {
      const cx = (m.inner[0] + m.inner[2]) / 2;
      const cy = (m.inner[1] + m.inner[3]) / 2;
      expect(cx > widget[0] && cx < widget[2] && cy > widget[1] && cy < widget[3]).toBe(true);
    }
  });
});

/** A long statement with one amount retyped in Courier on each of the given pages. */
async function retypedOn(pages: number[], total: number): Promise<Uint8Array> {
  const genuine = await makeDocument({ seed: 5, docType: "bank_statement", region: "GB", pages: total });
  return (await retypeAmountsOn(genuine, pages)).bytes;
}

describe("an image document", () => {
  it("is its one page: rendered (scaled within the bound) when anything was found about it", async () => {
    const photo = await editedPhoto(await makeDocument({ seed: 2, docType: "payslip", region: "GB" }), 3);
    const checked = await checkDocument(
      ctx,
      new Uint8Array(photo.bytes),
      { docType: "payslip", region: "GB" },
      {},
      "image/jpeg",
    );
    expect(checked.manifest.findingsTotal).toBeGreaterThan(0);
    const page = checked.manifest.pages[0]!;
    expect(page.number).toBe(1);
    expect(page.geometry?.units).toBe("px");
    const png = (await checked.png(1)) as Buffer;
    const meta = await sharp(png).metadata();
    const source = await sharp(photo.bytes).metadata();
    expect(meta.format).toBe("png");
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(2000);
    expect(Math.abs(meta.width! / meta.height! - source.width! / source.height!)).toBeLessThan(0.01);
  });
});

describe("bounds", () => {
  it("a 200-page PDF renders only the pages that carry findings (layout is read on the first 100)", async () => {
    const bytes = await retypedOn([17, 60, 95], 200);
    const checked = await checkDocument(ctx, bytes, { docType: "bank_statement", region: "GB" });
    const withFindings = new Set(
      checked.result.checks.flatMap((c) => c.findings.flatMap((f) => (f.page ? [f.page] : []))),
    );
    const rendered = checked.manifest.pages.filter((p) => p.image).map((p) => p.number);
    expect(rendered.length).toBeGreaterThanOrEqual(3);
    expect(rendered).toEqual(expect.arrayContaining([17, 60, 95]));
    for (const n of rendered) expect(withFindings.has(n)).toBe(true);
    expect(checked.manifest.pages.map((p) => p.number).sort((a, b) => a - b)).toEqual(
      [...withFindings].sort((a, b) => a - b),
    );
    expect(checked.manifest.pageCount).toBe(200);
    expect(checked.manifest.render?.images).toBe(rendered.length);
  }, 120_000);

  it("caps the images in count and bytes per detection, and says which pages it left out and why", async () => {
    const bytes = await retypedOn([1, 2, 3], 3);
    const byCount = await checkDocument(
      ctx,
      bytes,
      { docType: "bank_statement", region: "GB" },
      { evidence: { maxImages: 2 } },
    );
    expect(byCount.manifest.render?.images).toBe(2);
    const left = byCount.manifest.pages.filter((p) => !p.image);
    expect(left.length).toBeGreaterThanOrEqual(1);
    for (const p of left) expect(p.notRendered).toBe("page_cap");
    expect(byCount.manifest.render?.notes.join(" ")).toMatch(/at most 2 images per detection/);

    const byBytes = await checkDocument(
      ctx,
      bytes,
      { docType: "bank_statement", region: "GB" },
      { evidence: { maxBytes: 1000 } },
    );
    expect(byBytes.manifest.render?.images).toBe(0);
    expect(byBytes.manifest.render?.bytes).toBe(0);
    for (const p of byBytes.manifest.pages) expect(p.notRendered).toBe("byte_cap");
    // The findings and groups are there all the same.
    expect(byBytes.manifest.groups.length).toBeGreaterThan(0);
  });

  it("images stay within the long-side bound whatever the page size", async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([3000, 1200]);
    const font = await doc.embedFont(StandardFonts.Helvetica);
    page.drawText("Total due £1,000.00", { x: 100, y: 600, size: 40, font });
    page.drawText("Total due £9,000.00", { x: 100, y: 600, size: 40, font, color: undefined });
    const bytes = await doc.save();
    const checked = await checkDocument(ctx, bytes, { docType: "invoice", region: "GB" });
    for (const p of checked.manifest.pages.filter((x) => x.image)) {
      expect(Math.max(p.image!.widthPx, p.image!.heightPx)).toBeLessThanOrEqual(2000);
    }
  });
});

const tools = toolAvailability();

describe.skipIf(!tools.ok)(
  tools.ok
    ? "real-producer fixtures: the tool's edit is boxed where the sidecar says"
    : `real-producer fixtures: SKIPPED — ${tools.reason}`,
  () => {
    let set: SetResult;
    beforeAll(async () => {
      set = await realProducerSet({ subset: "test" });
    }, 600_000);

    const byKind = (kind: string) => set.fixtures.find((f) => f.tamper?.kind === kind) as RpFixture;

    it.each(["white_box_new_text", "incremental_update", "mupdf_redact_insert_incremental"])(
      "%s",
      async (kind) => {
        const f = byKind(kind);
        const change = f.tamper?.changes[0] as NonNullable<RpFixture["tamper"]>["changes"][number];
        const bytes = new Uint8Array(await readFile(f.file));
        const checked = await checkDocument(ctx, bytes, { docType: f.docType, region: f.region });
        const page = checked.manifest.pages.find((p) => p.number === change.page)!;
        expect(page?.image, f.id).toBeTruthy();

        const submitted = await marksIn((await checked.png(change.page)) as Buffer);
        const after = pointsToPixels(
          page,
          change.bboxAfter ?? change.bbox,
          submitted.width,
          submitted.height,
        );
        expect(Math.max(...submitted.marks.map((m) => iou(m.inner, after))), f.id).toBeGreaterThanOrEqual(
          0.5,
        );
        // The group of that box says what changed, from → to.
        const group = checked.manifest.groups.find((g) => g.after === change.after);
        expect(group?.before, JSON.stringify(checked.manifest.groups.map((g) => g.headline))).toBe(
          change.before,
        );

        if (!kind.includes("incremental")) return;
        expect(page.firstSaved, f.id).toBeTruthy();
        const first = await marksIn((await checked.png(change.page, "first-saved")) as Buffer);
        const before = pointsToPixels(page, change.bbox, first.width, first.height);
        expect(Math.max(...first.marks.map((m) => iou(m.inner, before))), f.id).toBeGreaterThanOrEqual(0.5);
        // No box where nothing changed: every changed region is the edit or a change the tool made
        // besides it, as the sidecar lists them (MuPDF's redaction drops the words after the value).
        const known = [change, ...(f.tamper?.sideEffects ?? []).filter((e) => e.page === change.page)]
          .filter((e): e is typeof e & { bbox: number[] } => Array.isArray(e.bbox))
          .map((e) => pointsToPixels(page, e.bbox, first.width, first.height));
        for (const m of first.marks)
          expect(
            known.some((k) => onRow(m.inner, k)),
            JSON.stringify({ m, known }),
          ).toBe(true);
      },
    );
  },
);
