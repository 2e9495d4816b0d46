import { describe, expect, it } from "vitest";
import { openRawPdf } from "./document.js";
import { buildReferenceIndex } from "./references.js";

/** A one-revision PDF written by hand, with a shared object, a trailer key and a dangling reference. */
function pdf(): Uint8Array {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R /Extra 4 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Resources << /XObject << /Fm0 4 0 R >> >> /Annots [5 0 R] >>",
    "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Length 0 >>\nstream\n\nendstream",
    "<< /Type /Annot /Subtype /Widget /AP << /N 4 0 R >> /Missing 9 0 R >>",
  ];
  let body = "%PDF-1.7\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xrefAt = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, "0")} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /FooBar 5 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(body, "latin1"));
}

describe("the reference index", () => {
  it("records every usage of an object, from the trailer and through nested dictionaries", () => {
    const idx = buildReferenceIndex(openRawPdf(pdf()), 0);
    expect(idx.complete).toBe(true);
    expect(idx.usages.get(4)).toEqual(
      expect.arrayContaining([
        { from: 1, path: "Extra" },
        { from: 3, path: "Resources/XObject/Fm0" },
        { from: 5, path: "AP/N" },
      ]),
    );
    expect(idx.usages.get(5)).toEqual(
      expect.arrayContaining([
        { from: "trailer", path: "FooBar" },
        { from: 3, path: "Annots[]" },
      ]),
    );
    // A reference to an object that does not exist is a usage too.
    expect(idx.usages.get(9)).toEqual([{ from: 5, path: "Missing" }]);
    expect(idx.reachable.has(2)).toBe(true);
  });

  it("marks itself incomplete rather than growing past its limits", () => {
    const idx = buildReferenceIndex(openRawPdf(pdf()), 0, { maxObjects: 2, maxUsages: 1000 });
    expect(idx.complete).toBe(false);
    expect(buildReferenceIndex(openRawPdf(pdf()), 0, { maxObjects: 100, maxUsages: 3 }).complete).toBe(false);
  });
});
