/**
 * Pixel findings on an image document, end to end through the check step's evidence and the reviewer page:
 * a white box painted on a scan (fixtures/captures/tamper.ts) is boxed on the stored page image where the
 * fixture painted it (found on the PNG by the marks' colour, placed by the image size alone), and the
 * reviewer page draws a box at the same place (its fractions of the page).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDocument, marksIn } from "../../checks/testdata/evidence-kit.js";
import { iou, jpegOf, kitPage } from "../../checks/testdata/capture-kit.js";
import { createTestStepContext, type TestStepContext } from "../../checks/testdata/step-context.js";
import { decodeRgb } from "../../fixtures/captures/simulate.js";
import { whiteBox } from "../../fixtures/captures/tamper.js";
import { reviewPage } from "./page.js";

const union = (bs: number[][]) => [
  Math.min(...bs.map((b) => b[0]!)),
  Math.min(...bs.map((b) => b[1]!)),
  Math.max(...bs.map((b) => b[2]!)),
  Math.max(...bs.map((b) => b[3]!)),
];
const inside = (a: readonly number[], b: readonly number[], m: number) =>
  a[0]! >= b[0]! - m && a[1]! >= b[1]! - m && a[2]! <= b[2]! + m && a[3]! <= b[3]! + m;

let ctx: TestStepContext;
beforeAll(async () => {
  ctx = await createTestStepContext();
});
afterAll(() => ctx.cleanup());

describe("a white box painted on a scanned image", () => {
  it("is boxed on the page image and on the reviewer page where it was painted, with its pixel findings", async () => {
    const k = kitPage({ seed: 21 });
    const scan = await decodeRgb(await jpegOf(k.img, 75, { density: 200 }));
    const t = whiteBox(scan, k.values.at(-2)!, 21, "dev", "7,777.77");
    const bytes = await jpegOf(t.img, 93);
    const checked = await checkDocument(
      ctx,
      bytes,
      { docType: "bank_statement", region: "GB" },
      {},
      "image/jpeg",
    );
    const pixel = checked.manifest.findings.filter(
      (f) => (f.evidence as { kind?: string } | undefined)?.kind === "pixels",
    );
    expect(pixel.length, JSON.stringify(checked.manifest.findings.map((f) => f.code))).toBeGreaterThan(0);
    expect(checked.result.discovered).toContain("capture_flatbed_scan");

    const page = checked.manifest.pages[0]!;
    expect(page.geometry?.units).toBe("px");
    const { width, height, marks } = await marksIn((await checked.png(1)) as Buffer);
    const sx = width / t.img.width;
    const sy = height / t.img.height;
    const expected = [t.box[0] * sx, t.box[1] * sy, t.box[2] * sx, t.box[3] * sy];
    // The marks (one per word of the new value) lie on the painted box and together cover it.
    expect(marks.length).toBeGreaterThan(0);
    for (const m of marks) expect(inside(m.inner, expected, 6), JSON.stringify({ m, expected })).toBe(true);
    expect(
      iou(union(marks.map((m) => m.outer)), expected),
      JSON.stringify({ expected, marks }),
    ).toBeGreaterThanOrEqual(0.5);
    // Every pixel finding's box is on the painted box's row: nothing boxed where nothing changed.
    for (const f of pixel) {
      const b = f.bbox as number[];
      expect(b[1]! < t.box[3] + 4 && b[3]! > t.box[1] - 4, `${f.code} at ${b}`).toBe(true);
    }

    const html = reviewPage({
      detail: {
        id: checked.input.detection,
        filename: "scan.jpg",
        completed_at: null,
        verdict: null,
      } as never,
      state: { kind: "ready", manifest: checked.manifest } as never,
      imageUrl: (n) => `/img/${n}`,
    });
    const boxes = [...html.matchAll(/data-box="([\d.,]+)"/g)].map((m) => m[1]!.split(",").map(Number));
    const fraction = [
      t.box[0] / t.img.width,
      t.box[1] / t.img.height,
      t.box[2] / t.img.width,
      t.box[3] / t.img.height,
    ];
    expect(boxes.length).toBeGreaterThan(0);
    const near = boxes.filter((b) => inside(b, fraction, 0.01));
    expect(near.length, JSON.stringify({ boxes, fraction })).toBe(boxes.length);
    // The finding boxes the value's words, inside the painted rectangle and its margins.
    expect(iou(union(near), fraction)).toBeGreaterThanOrEqual(0.4);
  });
});
