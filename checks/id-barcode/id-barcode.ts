import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { mayBeIdentityDocument } from "../../document/id/applies.js";
import { readIdentity } from "../../document/id/read.js";
import { OcrbFontMissingError } from "../../document/id/ocrb.js";
import { ImageDecodeError } from "../../document/raster.js";
import { defineCheck, flaggedCodes, skip, unreadable } from "../check.js";
import { DOUBTFUL_MISMATCH_SEVERITY, describeDoubts } from "../id-mrz/id-mrz.js";

/**
 * id.barcode: reads the 2D barcodes of an identity document (PDF417, QR, Data Matrix, Aztec; zxing-wasm with
 * its binary from node_modules), parses the AAMVA data elements of a US/Canadian licence's PDF417
 * (document/id/aamva.ts), validates its dates, and holds its name, licence number and dates against the
 * printed fields and, when the document also has one, the MRZ. Reports `barcode_present`.
 */

export const ID_BARCODE_CHECK_ID = "id.barcode";

export const ID_BARCODE_CODES = {
  barcode_viz_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "a printed field differs from what the licence's barcode encodes; boxed on the printed field",
  },
  barcode_viz_mismatch_barcode: {
    level: "note",
    kind: "consistency",
    means:
      "the barcode side of a barcode_viz_mismatch, boxed on the barcode (severity 0: the mismatch counts once)",
  },
  barcode_mrz_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "the barcode and the MRZ disagree on a field",
  },
  aamva_date_invalid: {
    level: "proof",
    kind: "identifier",
    means: "a date in the AAMVA data does not exist",
  },
  aamva_expiry_before_birth: {
    level: "proof",
    kind: "identifier",
    means: "the licence expires before its holder was born",
  },
  barcode_unparsed: {
    level: "note",
    kind: "identifier",
    means: "a PDF417 that claims to be AAMVA data cannot be parsed",
  },
} as const satisfies CodeTable;

const FIELD_WORDS: Record<string, string> = {
  surname: "family name",
  givenNames: "given names",
  documentNumber: "licence number",
  birth: "date of birth",
  expiry: "date of expiry",
};

const iso = (d: { y: number; m: number; d: number }) =>
  `${d.y}-${String(d.m).padStart(2, "0")}-${String(d.d).padStart(2, "0")}`;

export const idBarcodeCheck = defineCheck({
  id: ID_BARCODE_CHECK_ID,
  codes: ID_BARCODE_CODES,
  appliesTo: mayBeIdentityDocument,
  async inspect(doc, ctx) {
    let reading: Awaited<ReturnType<typeof readIdentity>>;
    try {
      reading = await readIdentity(doc, { now: ctx.now, signal: ctx.signal });
    } catch (err) {
      if (err instanceof OcrbFontMissingError)
        return unreadable(`The identity reading cannot run: ${err.message}.`);
      if (err instanceof ImageDecodeError)
        return unreadable(`The image could not be decoded to look for barcodes (${err.message}).`);
      throw err;
    }
    const pages = reading.pages.filter((p) => p.barcodes.length > 0);
    if (pages.length === 0) return skip("No 2D barcode was found on the document.");
    const findings: Finding[] = [];
    let aamvaCount = 0;
    for (const page of pages) {
      for (const b of page.barcodes) {
        if (b.aamvaError)
          findings.push({
            code: "barcode_unparsed",
            message: `On page ${page.page}, a PDF417 carries an AAMVA header but its data cannot be parsed (${b.aamvaError}).`,
            page: page.page,
            bbox: b.box,
            evidence: { format: b.format },
            severity: 2,
          });
        const a = b.aamva;
        if (!a) continue;
        aamvaCount++;
        for (const [name, d] of [
          ["date of birth (DBB)", a.birth],
          ["date of expiry (DBA)", a.expiry],
          ["date of issue (DBD)", a.issue],
        ] as const) {
          if (d?.invalid)
            findings.push({
              code: "aamva_date_invalid",
              message: `On page ${page.page}, the licence's barcode gives the ${name} ${d.raw}, which is no calendar date (${d.invalid}).`,
              page: page.page,
              bbox: b.box,
              evidence: { element: name, value: d.raw, why: d.invalid },
              severity: 8,
            });
        }
        if (a.birth?.date && a.expiry?.date && iso(a.expiry.date) <= iso(a.birth.date))
          findings.push({
            code: "aamva_expiry_before_birth",
            message: `On page ${page.page}, the licence's barcode says it expires (${iso(a.expiry.date)}) before its holder was born (${iso(a.birth.date)}).`,
            page: page.page,
            bbox: b.box,
            evidence: { birth: iso(a.birth.date), expiry: iso(a.expiry.date) },
            severity: 8,
          });
      }
      for (const d of page.barcodeVsViz) {
        const words = FIELD_WORDS[d.field] ?? d.field;
        const evidence = {
          field: d.field,
          label: `${words.charAt(0).toUpperCase()}${words.slice(1)} (barcode → printed)`,
          before: d.encoded,
          after: d.printed,
          barcode: d.encoded,
          printed: d.printed,
          secondReading: d.reread,
          printedConfidence: Math.round(d.viz.confidence),
          foundBy: d.viz.label,
          ...(d.doubts.length ? { readingDoubts: d.doubts } : {}),
          printedBox: d.printedBox,
          ...(d.encodedBox ? { barcodeBox: d.encodedBox } : {}),
        };
        findings.push({
          code: "barcode_viz_mismatch",
          message:
            d.doubts.length > 0
              ? `On page ${page.page}, the ${words} printed on the licence reads “${d.printed}” where its barcode encodes “${d.encoded}”, but the printed reading is not sure (${describeDoubts(d.doubts)}): an anomaly for the reviewer to look at, not proof of an alteration.`
              : `On page ${page.page}, the ${words} printed on the licence (“${d.printed}”) differs from what its barcode encodes (“${d.encoded}”); read twice with confidence, the printed value stays different: the print was altered after the card was made.`,
          page: page.page,
          bbox: d.printedBox,
          evidence,
          // Proof only when the printed reading is sure (the barcode decoded is exact): readingDoubts.
          severity: d.doubts.length > 0 ? DOUBTFUL_MISMATCH_SEVERITY : 8,
        });
        if (d.encodedBox)
          findings.push({
            code: "barcode_viz_mismatch_barcode",
            message: `On page ${page.page}, the barcode that encodes the ${words} as “${d.encoded}” where the card prints “${d.printed}”.`,
            page: page.page,
            bbox: d.encodedBox,
            evidence: { field: d.field, barcode: d.encoded, printed: d.printed },
            severity: 0,
          });
      }
      for (const m of page.barcodeVsMrz)
        findings.push({
          code: "barcode_mrz_mismatch",
          message: `On page ${page.page}, the barcode's ${FIELD_WORDS[m.field] ?? m.field} (“${m.barcode}”) differs from the MRZ's (“${m.mrz}”).`,
          page: page.page,
          bbox: m.box,
          evidence: { field: m.field, before: m.mrz, after: m.barcode },
          severity: 8,
        });
    }
    const formats = [...new Set(pages.flatMap((p) => p.barcodes.map((b) => b.format)))];
    return {
      findings,
      discovered: ["barcode_present"],
      formats,
      aamvaCount,
      compared: pages.reduce((s, p) => s + Object.keys(p.viz).length, 0),
    };
  },
  summary(j) {
    const what = `${j.formats.join(", ")} barcode${j.formats.length > 1 ? "s" : ""}`;
    if (j.outcome === "pass")
      return j.aamvaCount > 0
        ? `The licence's ${what} carries valid AAMVA data${j.compared ? " that agrees with the printed fields compared" : ""}.`
        : `The document carries ${what}; none holds licence data to compare.`;
    return `The ${what} shows ${flaggedCodes(j.findings).join(", ")}: ${j.findings.find((f) => (f.severity ?? 0) >= 2)?.message ?? ""}`;
  },
});
