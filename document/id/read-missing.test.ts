import { describe, expect, it } from "vitest";
import { createIdOcr } from "./id-ocr.js";
import { readIdentity } from "./read.js";
import { devIdFixture, ID_NOW } from "./testdata/id-documents.js";

/**
 * A printed value the page's reading garbled (read.ts readMissing): a development TD1 scan (eval:ids, dev
 * draw 0) whose printed document number was changed (Y85F58204 printed Y85F57204, the MRZ as issued) was read
 * "vesFs7208", too far from the MRZ's number to be found by its value. Read again alone, at two resolutions
 * that agree, it is found and its disagreement with the MRZ is proof; on the genuine card it is no
 * disagreement at all.
 */
async function reading(
  id: string,
  region: "EU" | "US" = "EU",
  opts: Parameters<typeof devIdFixture>[2] = {},
) {
  const { doc } = await devIdFixture(id, region, opts);
  const ocr = await createIdOcr();
  try {
    return await readIdentity(doc, { now: ID_NOW, ocr });
  } finally {
    await ocr.terminate();
  }
}

describe("a garbled printed value read again alone", () => {
  it("finds a changed document number the page's reading garbled, and proves the mismatch", async () => {
    const r = await reading("ids-dev-td1-23006-scan-pdf-viz_changed");
    const d = r.pages.flatMap((p) => p.mrzVsViz).find((x) => x.field === "documentNumber");
    expect(d?.encoded).toBe("Y85F58204");
    expect(d?.viz.text).toBe("Y85F57204");
    expect(d?.doubts).toEqual([]);
  }, 180_000);

  it("on the genuine card, finds no disagreement", async () => {
    const r = await reading("ids-dev-td1-23006-scan-pdf");
    expect(r.pages.flatMap((p) => p.mrzVsViz)).toEqual([]);
  }, 180_000);

  it("takes no date read with a one-digit month (a digit lost) for a genuine licence's date of birth", async () => {
    // Dev draw 5: 05/20/1963 printed, read "1/20/1963" alone at two scales.
    const r = await reading("ids-dev-d5-dl-74010-scan-pdf", "US", {
      draw: 5,
      genuinePerKind: 12,
      tamperedPerKind: 8,
    });
    expect(r.pages.flatMap((p) => p.barcodeVsViz).filter((d) => d.field === "birth")).toEqual([]);
  }, 180_000);
});
