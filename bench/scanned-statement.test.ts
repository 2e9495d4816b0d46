import { describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { makeOfficeScan, makeScannedPdf } from "../fixtures/scans.js";
import { evaluate } from "./eval-harness.js";

/**
 * Issue 21's scanned statement: a genuine one-page bank statement scanned the ordinary way (200 dpi, a
 * slight tilt, a little noise, JPEG). Before the OCR was rebuilt it scored 99: the OCR dropped rows and
 * text.arithmetic called the running balances their amounts broke tampering. It must score below 30 — and
 * not because nothing was read: its running balances are checked on the OCR'd table.
 */

const OCR_MS = 600_000; // a loaded machine may take minutes; the bound is not what this test is about

describe("the scanned statement of issue 21", () => {
  it("as a JPEG scan: scores below 30, with its running balances read and checked", async () => {
    const pdf = await makeDocument({ seed: 21, docType: "bank_statement", region: "GB" });
    const jpeg = await makeOfficeScan(pdf, { seed: 21 });
    const [d] = await evaluate(
      [
        {
          id: "scanned-statement",
          label: "genuine",
          docType: "bank_statement",
          region: "GB",
          variant: "office scan",
          filename: "statement.jpg",
          contentType: "image/jpeg",
          make: async () => new Uint8Array(jpeg),
        },
      ],
      { ocrTimeoutMs: OCR_MS },
    );
    expect(d?.failure).toBeUndefined();
    expect(d?.score).toBeLessThan(30);
    const arithmetic = d?.agentInput?.checks.find((c) => c.checkId === "text.arithmetic");
    expect(arithmetic?.summary).toMatch(/running balances/);
    expect(d?.agentInput?.text).toMatch(/CARD PAYMENT SAINSBURYS/);
  }, 900_000);

  it("as an image-only PDF from the scanner: scores below 30, read on the page in points", async () => {
    const pdf = await makeDocument({ seed: 21, docType: "bank_statement", region: "GB" });
    const scanned = await makeScannedPdf(pdf, { seed: 21 });
    const [d] = await evaluate(
      [
        {
          id: "scanned-statement-pdf",
          label: "genuine",
          docType: "bank_statement",
          region: "GB",
          variant: "office scan, image-only PDF",
          filename: "statement.pdf",
          contentType: "application/pdf",
          make: async () => scanned,
        },
      ],
      { ocrTimeoutMs: OCR_MS },
    );
    expect(d?.failure).toBeUndefined();
    expect(d?.score).toBeLessThan(30);
    const arithmetic = d?.agentInput?.checks.find((c) => c.checkId === "text.arithmetic");
    expect(arithmetic?.summary).toMatch(/running balances/);
  }, 900_000);
});
