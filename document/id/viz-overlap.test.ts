import { describe, expect, it, vi } from "vitest";
import { capture, drawCapture } from "../../fixtures/ids/capture.js";
import { renderId } from "../../fixtures/ids/render.js";
import { genuineRendering, makeSpecimen } from "../../fixtures/ids/specimen.js";
import { createIdOcr, type IdOcr } from "./id-ocr.js";
import { readIdentity } from "./read.js";
import { ID_NOW, idDocumentModel } from "./testdata/id-documents.js";

/**
 * The visual zone above an MRZ band is rectified by the band's geometry, known before the band is read
 * (read.ts readPage, mrz-read.ts mrzBand): its OCR (the identity check's dominant cost, in the OCR's worker
 * thread) is asked for before the band is read by templates and the barcodes are searched on the main thread,
 * so the two run side by side on two cores (issue 22's time target on a passport photo).
 */
const events: string[] = [];

vi.mock("./barcodes.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("./barcodes.js")>();
  return {
    ...real,
    findBarcodes: (...args: Parameters<typeof real.findBarcodes>) => {
      events.push("barcodes");
      return real.findBarcodes(...args);
    },
  };
});

describe("the visual zone of a passport photo", () => {
  it("is sent to the OCR before the barcodes are searched, and read as before", async () => {
    const specimen = makeSpecimen(4242, "td3");
    const rendered = await renderId(genuineRendering(specimen), 4242);
    const photo = await capture(rendered.image, drawCapture("photo", 77), 77);
    const doc = await idDocumentModel(new Uint8Array(photo.jpeg), "image/jpeg", "EU", "passport.jpg");
    const engine = await createIdOcr();
    const ocr: IdOcr = {
      ...engine,
      readText: (img, mode, whitelist) => {
        if ((mode ?? "sparse") === "sparse") events.push("visual zone");
        return engine.readText(img, mode, whitelist);
      },
    };
    try {
      const reading = await readIdentity(doc, { now: ID_NOW, ocr });
      const first = (e: string) => events.indexOf(e);
      expect(first("visual zone")).toBeGreaterThanOrEqual(0);
      expect(first("visual zone")).toBeLessThan(first("barcodes"));
      const page = reading.pages.find((p) => p.mrz);
      expect(page?.viz.surname?.text).toBe(specimen.person.surname);
      expect(page?.mrzVsViz.filter((d) => d.doubts.length === 0)).toEqual([]);
    } finally {
      await engine.terminate();
    }
  }, 180_000);
});
