import { describe, expect, it } from "vitest";
import type { DocType } from "../../core/verdict.js";
import type { DocumentModel } from "../model.js";
import { mayBeIdentityDocument } from "./applies.js";

/** An image document as the check step sees it after the OCR pass: its pages' OCR text. */
function image(texts: string[] | undefined, declaredDocType: DocType = "bank_statement"): DocumentModel {
  return {
    bytes: new Uint8Array(),
    sizeBytes: 0,
    contentType: "image/jpeg",
    filename: "scan.jpg",
    declaredDocType,
    region: "GB",
    warnings: [],
    ...(texts
      ? { imagePages: texts.map((text, i) => ({ number: i + 1, text, width: 595, height: 842, ocr: true })) }
      : {}),
  };
}

const STATEMENT = [
  "Northfield Bank plc  Current account statement",
  "Sort code 20-45-77  Account number 41234567",
  "01/06/2025 Opening balance £3,394.08",
  "11/06/2025 CARD PAYMENT SAINSBURYS £57.86 £3,336.22",
  "30/06/2025 Closing balance £3,278.22",
].join("\n");

describe("which documents the identity checks read", () => {
  it("skips a scanned statement declared as one whose OCR text shows nothing of an identity document", () => {
    expect(mayBeIdentityDocument(image([STATEMENT]))).toBe(false);
    expect(mayBeIdentityDocument(image([STATEMENT, STATEMENT], "receipt"))).toBe(false);
  });

  it("reads one declared an identity document, whatever its text", () => {
    expect(mayBeIdentityDocument(image([STATEMENT], "id_document"))).toBe(true);
  });

  it("reads an undeclared one whose text shows an MRZ run, a caption or a document name", () => {
    expect(mayBeIdentityDocument(image([`${STATEMENT}\nP<GBRSMITH<<JOHN<<<<<<<<<<<<<<<<<<<<<<<<<<`]))).toBe(
      true,
    );
    expect(mayBeIdentityDocument(image([`${STATEMENT}\nDate of birth 12 MAR 1984`]))).toBe(true);
    expect(mayBeIdentityDocument(image([`${STATEMENT}\nPASSEPORT / PASSPORT`]))).toBe(true);
    expect(mayBeIdentityDocument(image([`${STATEMENT}\nFuhrerschein`]))).toBe(true);
  });

  it("reads a picture whose OCR found next to nothing, or that was not OCR'd", () => {
    expect(mayBeIdentityDocument(image(["4 JOHN ..  12"]))).toBe(true);
    expect(mayBeIdentityDocument(image(undefined))).toBe(true);
    expect(mayBeIdentityDocument(image([]))).toBe(true);
  });
});
