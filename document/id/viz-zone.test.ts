import { describe, expect, it } from "vitest";
import { createIdOcr } from "./id-ocr.js";
import { readIdentity } from "./read.js";
import { devIdFixture, ID_NOW } from "./testdata/id-documents.js";

/**
 * The visual zone is read on the page rectified by the MRZ down to the band's top, not over it
 * (read.ts uprightByMrz): with the band's dense lines in the image, the sparse reading of a development TD1 scan
 * (eval:ids dev draw 6) read its changed surname "vitmaz." under no caption, and the change (YILMAZ printed,
 * PETROVIC in the MRZ) was never compared.
 */
const DRAW_6 = { draw: 6, genuinePerKind: 12, tamperedPerKind: 8 };

async function reading(id: string) {
  const { doc } = await devIdFixture(id, "EU", DRAW_6);
  const ocr = await createIdOcr();
  try {
    return await readIdentity(doc, { now: ID_NOW, ocr });
  } finally {
    await ocr.terminate();
  }
}

describe("the visual zone read above the MRZ band", () => {
  it("finds a changed surname under its caption and proves the mismatch", async () => {
    const r = await reading("ids-dev-d6-td1-83002-scan-pdf-viz_changed");
    const d = r.pages.flatMap((p) => p.mrzVsViz).find((x) => x.field === "surname");
    expect(d?.encoded).toBe("PETROVIC");
    expect(d?.viz.text).toBe("YILMAZ");
    expect(d?.doubts).toEqual([]);
  }, 180_000);

  it("leaves no line of the MRZ among the visual zone's lines", async () => {
    const r = await reading("ids-dev-d6-td1-83002-scan-pdf");
    const page = r.pages.find((p) => p.mrz);
    expect(page?.mrzVsViz.filter((d) => d.doubts.length === 0)).toEqual([]);
    expect(Object.values(page?.viz ?? {}).some((f) => f.text.includes("<"))).toBe(false);
  }, 180_000);
});
