import { describe, expect, it } from "vitest";
import type { CheckResult } from "../../core/check-result.js";
import type { DocumentModel } from "../../document/model.js";
import { buildDocumentModel } from "../../document/pdf-model.js";
import { capture, drawCapture } from "../../fixtures/ids/capture.js";
import { renderId } from "../../fixtures/ids/render.js";
import {
  genuineRendering,
  type IdRendering,
  makeSpecimen,
  tamperedRendering,
} from "../../fixtures/ids/specimen.js";
import { idMrzCheck } from "./id-mrz.js";

/**
 * id.mrz on generated passport pages (fixtures/ids/), scanned: the genuine page passes with `mrz_present`;
 * a broken check digit is proof boxed on the MRZ; a date of birth changed in the visual zone only is an
 * mrz_viz_mismatch with both values and both boxes.
 */
const NOW = new Date("2026-06-01T00:00:00Z");

async function scanned(
  r: IdRendering,
  seed: number,
  declaredDocType: DocumentModel["declaredDocType"] = "id_document",
): Promise<DocumentModel> {
  const rendered = await renderId(r, seed);
  const shot = await capture(rendered.image, drawCapture("scan", seed), seed);
  return buildDocumentModel({
    bytes: new Uint8Array(shot.jpeg),
    contentType: "image/jpeg",
    filename: "passport.jpg",
    declaredContentType: null,
    declaredDocType,
    region: "EU",
  });
}

const strong = (r: CheckResult) => r.findings.filter((f) => (f.severity ?? 0) >= 5);

describe("id.mrz", () => {
  it("passes a genuine passport page and reports mrz_present", async () => {
    const s = { ...makeSpecimen(31, "td3"), layout: 0 };
    const r = await idMrzCheck.run(await scanned(genuineRendering(s), 31), { now: NOW });
    expect(r.discovered).toContain("mrz_present");
    expect(strong(r)).toEqual([]);
    expect(r.outcome).toBe("pass");
  }, 180_000);

  it("proves a broken check digit, boxed on the MRZ's second line", async () => {
    const s = { ...makeSpecimen(32, "td3"), layout: 1 };
    const doc = await scanned(tamperedRendering(s, "mrz_check_digit", 32), 32);
    const r = await idMrzCheck.run(doc, { now: NOW });
    expect(r.outcome).toBe("flag");
    const f = r.findings.find((x) => x.code === "mrz_check_digit_failed");
    expect(f?.severity).toBe(8);
    // The MRZ is at the bottom of the page: the box is in the lower fifth of the image.
    expect(f?.bbox?.[1]).toBeGreaterThan(0.75 * 1335);
  }, 180_000);

  it("on a document not declared an identity document, a zone naming no ICAO state gives notes only", async () => {
    // A receipt's lines of letters and `<` read as an MRZ fail their check digits: OCR of other text. The same
    // zone on a declared identity document stays proof.
    const s = { ...makeSpecimen(32, "td3"), layout: 1, issuer: "QQQ", nationality: "QQQ" };
    const rendering = tamperedRendering(s, "mrz_check_digit", 32);
    const asReceipt = await idMrzCheck.run(await scanned(rendering, 32, "receipt"), { now: NOW });
    expect(asReceipt.findings.some((f) => f.code === "mrz_state_unknown")).toBe(true);
    expect(asReceipt.findings.filter((f) => (f.severity ?? 0) > 2)).toEqual([]);
    const asId = await idMrzCheck.run(await scanned(rendering, 32), { now: NOW });
    expect(asId.findings.find((f) => f.code === "mrz_check_digit_failed")?.severity).toBe(8);
  }, 240_000);

  it("holds the visual zone against the MRZ: both values, both boxes", async () => {
    // A seed whose tamper changes the printed date of birth (the MRZ keeps the issued one).
    let seed = 40;
    let t = tamperedRendering({ ...makeSpecimen(seed, "td3"), layout: 0 }, "viz_changed", seed);
    while (!t.viz?.birth) {
      seed++;
      t = tamperedRendering({ ...makeSpecimen(seed, "td3"), layout: 0 }, "viz_changed", seed);
    }
    const r = await idMrzCheck.run(await scanned(t, seed), { now: NOW });
    const printed = r.findings.find((x) => x.code === "mrz_viz_mismatch");
    const mrzSide = r.findings.find((x) => x.code === "mrz_viz_mismatch_mrz");
    expect(printed?.severity).toBe(8);
    // A confident reading: no doubt left, the OCR's confidence and the caption it was read under shown.
    expect(printed?.evidence?.readingDoubts).toBeUndefined();
    expect(printed?.evidence?.printedConfidence).toBeGreaterThanOrEqual(0);
    expect(printed?.evidence?.foundBy).toEqual(expect.any(String));
    expect(printed?.evidence?.field).toBe("birth");
    const b = t.specimen.person.birth;
    expect(printed?.evidence?.before).toBe(
      `${b.y}-${String(b.m).padStart(2, "0")}-${String(b.d).padStart(2, "0")}`,
    );
    expect(String(printed?.evidence?.after)).toContain(String(t.viz.birth!.y % 100).padStart(2, "0"));
    // The MRZ side: same values, boxed below the printed field, at severity 0 (the mismatch counts once).
    expect(mrzSide?.severity).toBe(0);
    expect(mrzSide?.evidence?.printed).toBe(printed?.evidence?.after);
    expect(mrzSide!.bbox![1]).toBeGreaterThan(printed!.bbox![3]!);
  }, 180_000);
});
