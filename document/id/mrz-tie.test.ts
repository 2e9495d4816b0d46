import { describe, expect, it } from "vitest";
import { createIdOcr } from "./id-ocr.js";
import { readIdentity } from "./read.js";
import { devIdFixture, ID_NOW } from "./testdata/id-documents.js";

/**
 * An MRZ character both template readings leave at a near tie between the same two characters is settled by
 * tesseract when it read the runner-up (mrz-read.ts readMrz). A development TD1 photo (eval:ids --draw 13) whose
 * expiry was changed in the MRZ: its optional data's 8, which only the composite covers (failing with the
 * change), read B by the templates at both resolutions by a hair, 8 by tesseract.
 */
describe("a near tie of the templates", () => {
  it("is broken by tesseract's reading of the runner-up", async () => {
    const { fixture, doc } = await devIdFixture("ids-dev-d13-td1-153009-photo-mrz_check_digit", "EU", {
      draw: 13,
      genuinePerKind: 12,
      tamperedPerKind: 8,
    });
    const ocr = await createIdOcr();
    try {
      const reading = await readIdentity(doc, { now: ID_NOW, ocr });
      const mrz = reading.pages.find((p) => p.mrz)?.mrz;
      expect(mrz?.reading.lines).toEqual(fixture.truth().mrz);
      // The expiry's failing check digit stays proof: the tie was not in it.
      expect(mrz?.validation.problems.map((p) => p.code)).toContain("check_digit");
    } finally {
      await ocr.terminate();
    }
  }, 180_000);
});
