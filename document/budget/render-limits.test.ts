import { describe, expect, it } from "vitest";
import { writePdf } from "../../fixtures/hostile-pdf.js";
import { renderPdfPages } from "../pdf-images.js";
import { RENDER_LIMITS } from "./limits.js";

describe("RENDER_LIMITS: the bound every caller that rasterises pages shares", () => {
  it("renders at most maxPagesPerDocument pages per call and maxPixelsPerPage per page, whatever is asked", async () => {
    const n = RENDER_LIMITS.maxPagesPerDocument + 5;
    const kids = Array.from({ length: n }, (_, i) => `${3 + i} 0 R`).join(" ");
    const bytes = writePdf([
      "<< /Type /Catalog /Pages 2 0 R >>",
      `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`,
      ...Array.from({ length: n }, () => "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"),
    ]);
    const sizes: number[] = [];
    await renderPdfPages(
      bytes,
      Array.from({ length: n }, (_, i) => i + 1),
      20, // 16 500 × 23 400 pixels asked for
      async (_page, img) => {
        sizes.push(img.width * img.height);
      },
      { maxPixels: 10 ** 9 },
    );
    expect(sizes).toHaveLength(RENDER_LIMITS.maxPagesPerDocument);
    for (const s of sizes) expect(s).toBeLessThanOrEqual(RENDER_LIMITS.maxPixelsPerPage);
  });
});
