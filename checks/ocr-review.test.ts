import { beforeAll, describe, expect, it } from "vitest";
import type { CheckResult, Finding } from "../core/check-result.js";
import type { BoxTuple } from "../core/page-geometry.js";
import type { DocumentModel, PdfPage } from "../document/model.js";
import type { TextRun } from "../document/page-layout.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { makeDocument } from "../fixtures/documents.js";
import { mergedReading, OCR_REVIEW, type OcrReviewDeps, reviewOcrFindings } from "./ocr-review.js";
import { TEST_NOW } from "./testdata/text-check-kit.js";
import { textArithmeticCheck } from "./text-arithmetic/text-arithmetic.js";
import { textIdentifiersCheck } from "./text-identifiers.js";

/**
 * The OCR-uncertainty rule on a statement as an OCR would give it: the generated statement's words with
 * their boxes, each marked as read by OCR with a confidence, then edited the way OCR errs (a row skipped,
 * a digit misread, a decimal point lost). Each test would fail without its rule: text.arithmetic alone
 * reports every one of these as a severity-9 mismatch.
 */

let pdf: Uint8Array;
beforeAll(async () => {
  pdf = await makeDocument({ seed: 21, docType: "bank_statement", region: "GB" });
});

/** The statement as an OCR read it: every word a run with `confidence`, the page marked OCR'd. */
async function ocrModel(edit?: (runs: TextRun[]) => TextRun[]): Promise<DocumentModel> {
  const doc = await modelOf(pdf, { docType: "bank_statement", region: "GB" });
  const page = doc.pdf!.pages[0] as PdfPage;
  let runs: TextRun[] = page.layout!.runs.map((r) => ({ ...r, font: "", confidence: 95 }));
  if (edit) runs = edit(runs);
  page.layout = { ...page.layout!, runs };
  page.ocr = true;
  page.ocrReading = {
    scale: 3,
    skewDeg: 0,
    perspective: false,
    languages: ["eng"],
    confidence: 95,
    words: runs.length,
    ms: 0,
  };
  return doc;
}

const runOf = (runs: TextRun[], text: string) => {
  const r = runs.find((x) => x.text.trim() === text);
  if (!r) throw new Error(`no run ${text}`);
  return r;
};
/** The runs of the row whose date run is `date` and that carries `label`. */
const rowOf = (runs: TextRun[], label: string) => {
  const anchor = runs.find((x) => x.text.includes(label));
  if (!anchor) throw new Error(`no row ${label}`);
  return runs.filter((x) => Math.abs(x.y - anchor.y) < 2);
};

async function arithmetic(doc: DocumentModel): Promise<CheckResult> {
  return textArithmeticCheck.run(doc, { now: TEST_NOW });
}

/** Deps whose re-read returns what `truth` shows in the box, with the given confidence. */
function depsFrom(truth: DocumentModel | undefined, confidence = 97): OcrReviewDeps & { boxes: BoxTuple[] } {
  const boxes: BoxTuple[] = [];
  return {
    boxes,
    async reread(_page, box) {
      boxes.push(box);
      if (!truth) return undefined;
      const runs = truth.pdf!.pages[0]!.layout!.runs;
      return runs
        .filter((r) => {
          const cx = (r.bbox[0] + r.bbox[2]) / 2;
          const cy = (r.bbox[1] + r.bbox[3]) / 2;
          return cx >= box[0] && cx <= box[2] && cy >= box[1] && cy <= box[3];
        })
        .map((r) => ({ ...r, confidence }));
    },
    async rerun(ids, model) {
      const out: CheckResult[] = [];
      if (ids.includes("text.arithmetic")) out.push(await arithmetic(model));
      if (ids.includes("text.identifiers"))
        out.push(await textIdentifiersCheck.run(model, { now: TEST_NOW }));
      return out;
    },
  };
}

const mismatches = (r: CheckResult) => r.findings.filter((f) => /mismatch/.test(f.code));

describe("the OCR-uncertainty rule (checks/ocr-review.ts)", () => {
  it("states the OCR's confidence in the values a finding uses, and keeps a confidently read mismatch", async () => {
    // An amount changed by several digits between balances that agree, read confidently: not an OCR error,
    // it stands. (A balance alone out of line, the chain following on from the expected one, is a reading
    // doubt of the arithmetic itself: checks/text-arithmetic/accused-side.test.ts.)
    const doc = await ocrModel((runs) => {
      runOf(runs, "£57.86").text = "£912.40";
      return runs;
    });
    const before = await arithmetic(doc);
    expect(mismatches(before).length).toBeGreaterThan(0);
    const deps = depsFrom(undefined);
    const { results } = await reviewOcrFindings(doc, [before], deps);
    const kept = mismatches(results[0]!);
    expect(kept.length).toBe(mismatches(before).length);
    for (const f of kept) {
      expect(f.severity, JSON.stringify(f.evidence)).toBe(9);
      expect(f.message).toMatch(/Read by OCR from the scan: .*\(95 %\)/);
      expect(f.evidence?.ocr).toMatchObject({ confidence: 95, verified: true });
    }
    expect(deps.boxes).toEqual([]);
  });

  it("a skipped line: re-reads the region, and the mismatch the missing row made is gone", async () => {
    const truth = await ocrModel();
    const doc = await ocrModel((runs) => {
      const row = new Set(rowOf(runs, "SAINSBURYS"));
      return runs.filter((r) => !row.has(r));
    });
    const before = await arithmetic(doc);
    const f = mismatches(before)[0] as Finding;
    expect(f.code).toBe("running_balance_mismatch");
    expect(f.severity).toBe(9);
    const deps = depsFrom(truth);
    const report = await reviewOcrFindings(doc, [before], deps);
    expect(deps.boxes.length).toBeGreaterThan(0);
    expect(report.dropped.map((x) => x.code)).toContain("running_balance_mismatch");
    expect(mismatches(report.results[0]!)).toEqual([]);
    expect(report.results[0]!.outcome).toBe("pass");
  });

  it("a skipped line the re-read cannot restore stays a note, never proof", async () => {
    const doc = await ocrModel((runs) => {
      const row = new Set(rowOf(runs, "SAINSBURYS"));
      return runs.filter((r) => !row.has(r));
    });
    const before = await arithmetic(doc);
    const report = await reviewOcrFindings(doc, [before], depsFrom(undefined));
    const f = mismatches(report.results[0]!)[0] as Finding;
    expect(f.severity).toBe(OCR_REVIEW.noteSeverity);
    expect(f.message).toMatch(/^Could not be verified on the scan/);
    expect((f.evidence?.ocr as { explanations: string[] } | undefined)?.explanations).toContain("line_gap");
    expect(report.results[0]!.outcome).toBe("pass");
  });

  it("a low-confidence digit: unconfirmed, it is a note", async () => {
    const doc = await ocrModel((runs) => {
      const r = runOf(runs, "£3,278.22");
      r.text = "£3,218.22";
      r.confidence = 48;
      return runs;
    });
    const before = await arithmetic(doc);
    // The table reader already weighs the OCR's confidence (a note); the review says why.
    expect(mismatches(before).length).toBeGreaterThan(0);
    const report = await reviewOcrFindings(doc, [before], depsFrom(undefined));
    for (const f of mismatches(report.results[0]!)) {
      expect(f.severity).toBeLessThanOrEqual(OCR_REVIEW.noteSeverity);
      expect((f.evidence?.ocr as { explanations: string[] } | undefined)?.explanations).toContain(
        "low_confidence",
      );
    }
  });

  it("a low-confidence digit the sharper re-read reads the same, confidently: the mismatch stands", async () => {
    const edit = (confidence: number) => (runs: TextRun[]) => {
      const r = runOf(runs, "£57.86");
      r.text = "£912.40";
      r.confidence = confidence;
      return runs;
    };
    const doc = await ocrModel(edit(48));
    const truth = await ocrModel(edit(97));
    const before = await arithmetic(doc);
    const report = await reviewOcrFindings(doc, [before], depsFrom(truth));
    const kept = mismatches(report.results[0]!);
    expect(kept.length).toBeGreaterThan(0);
    for (const f of kept) {
      expect(f.severity).toBe(9);
      expect(f.message).toMatch(/confirmed on a sharper re-reading/);
    }
  });

  describe("a value under the confident line that the sharper re-read reads alike (readAlikeTwice)", () => {
    /** The run "£57.86" read as `text` at `confidence`, its characters at `chars` (digits) and 99 (others). */
    const edit =
      (text: string, confidence: number, chars = 97) =>
      (runs: TextRun[]) => {
        const r = runOf(runs, "£57.86");
        r.text = text;
        r.confidence = confidence;
        const w = (r.bbox[2] - r.bbox[0]) / text.length;
        r.chars = [...text].map((c, i) => ({
          text: c,
          bbox: [r.bbox[0] + i * w, r.bbox[1], r.bbox[0] + (i + 1) * w, r.bbox[3]],
          confidence: /\d/.test(c) ? chars : 99,
        }));
        return runs;
      };
    async function reviewed(first: (runs: TextRun[]) => TextRun[], again: (runs: TextRun[]) => TextRun[]) {
      const doc = await ocrModel(first);
      const before = await arithmetic(doc);
      expect(mismatches(before).length).toBeGreaterThan(0);
      const truth = await ocrModel(again);
      // The re-read keeps each word's own confidence (the truth's), as a second reading would give it.
      const deps = depsFrom(truth);
      const reread = deps.reread;
      deps.reread = async (page, box, factor) =>
        (await reread(page, box, factor))?.map((r) => ({
          ...r,
          confidence: truth.pdf!.pages[0]!.layout!.runs.find((t) => t.text === r.text && t.bbox === r.bbox)
            ?.confidence,
        }));
      return mismatches((await reviewOcrFindings(doc, [before], deps)).results[0]!);
    }

    it("read alike at 84 % both times, each digit sure: confirmed, but an anomaly at most (it corroborates, never proves)", async () => {
      const kept = await reviewed(edit("£912.40", 84), edit("£912.40", 84));
      expect(kept.length).toBeGreaterThan(0);
      for (const f of kept) {
        expect(f.severity, f.message).toBe(OCR_REVIEW.agreedSeverity);
        expect(f.message).toMatch(/read them alike/);
        expect(f.evidence?.ocr).toMatchObject({ verified: true, reread: true, readAlike: true });
      }
    });

    it("read otherwise on the re-read, or a digit unsure, or a reading well under the line: still a note", async () => {
      for (const [first, again] of [
        [edit("£912.40", 84), edit("£912.48", 84)],
        [edit("£912.40", 84), edit("£912.40", 84, 40)],
        [edit("£912.40", 84, 40), edit("£912.40", 84)],
        [edit("£912.40", 60), edit("£912.40", 84)],
      ] as const) {
        const kept = await reviewed(first, again);
        expect(kept.length).toBeGreaterThan(0);
        for (const f of kept) {
          expect(f.severity, f.message).toBeLessThanOrEqual(OCR_REVIEW.noteSeverity);
          expect(f.evidence?.ocr).not.toMatchObject({ readAlike: true });
        }
      }
    });
  });

  it("a mismatch the re-run no longer reports: dropped when the re-read reads a figure otherwise, kept (an anomaly) when it read every figure alike", async () => {
    const first = (runs: TextRun[]) => {
      runOf(runs, "£57.86").text = "£57.36";
      return runs;
    };
    const doc = await ocrModel(first);
    const before = await arithmetic(doc);
    expect(mismatches(before).some((f) => f.severity === 9)).toBe(true);
    // The re-read reads every figure as the first pass did, but the re-run on it no longer reports the mismatch
    // (on the development captures the re-read garbled a date or the column header, and the row left the check).
    const deps = depsFrom(await ocrModel(first));
    deps.rerun = async () => [{ ...before, outcome: "pass", severity: 0, findings: [] }];
    const kept = mismatches((await reviewOcrFindings(doc, [before], deps)).results[0]!);
    expect(kept.length).toBeGreaterThan(0);
    for (const f of kept) {
      expect(f.severity, f.message).toBe(OCR_REVIEW.agreedSeverity);
      expect(f.evidence?.ocr).toMatchObject({ verified: true, reread: true, readAlike: true });
    }
    // The re-read reads the misread figure right: the mismatch was the OCR's, and it is dropped.
    const report = await reviewOcrFindings(doc, [before], depsFrom(await ocrModel()));
    expect(mismatches(report.results[0]!)).toEqual([]);
    expect(report.dropped.length).toBeGreaterThan(0);
  });

  describe("the re-reading's figures merged into the first pass's page (mergedReading)", () => {
    // A digit replaced on the page (the first row's £1,371.00 printed as £1,311.00), read at 78 % on the first
    // pass. The sharper re-reading reads every figure alike and surely, but garbles the dates and the column
    // header of the block it reads (as on the development captures: "01/06/2025" → "0106/2025", "Balance" →
    // "Ralanca", words at 30-40 %), and on that reading the ledger is no table any more.
    const tampered = (confidence: number) => (runs: TextRun[]) => {
      const r = runOf(runs, "£1,371.00");
      r.text = "£1,311.00";
      r.confidence = confidence;
      return runs;
    };
    // …and sets the words of a row on baselines of their own (the amounts half a line above their labels, as on
    // the development captures), with a fragment of a rule read as a lone "7" at 35 %.
    const garbled = (runs: TextRun[]) => [
      ...runs.map((r) =>
        /^\d\d\/06\/2025$/.test(r.text.trim())
          ? { ...r, text: r.text.replace("/", ""), confidence: 40 }
          : /^(Date|Description|Money|out|in|Balance)$/.test(r.text.trim())
            ? { ...r, text: `${r.text.slice(0, -1)}c`, confidence: 30 }
            : /^£/.test(r.text.trim())
              ? { ...r, y: r.y + 6 }
              : r,
      ),
      ...runs
        .filter((r) => r.text.trim() === "£1,311.00")
        .map((r) => ({
          ...r,
          text: "7",
          bbox: [r.bbox[2] + 2, r.bbox[1], r.bbox[2] + 6, r.bbox[3]] as BoxTuple,
          x: r.bbox[2] + 2,
          confidence: 35,
        })),
    ];

    it("a re-reading that garbles the dates and labels but reads the figures alike: the mismatch is examined again and stands", async () => {
      const doc = await ocrModel(tampered(78));
      const before = await arithmetic(doc);
      expect(mismatches(before).some((f) => (f.severity ?? 0) >= 2)).toBe(true);
      const deps = depsFrom(await ocrModel(tampered(97)));
      const reread = deps.reread;
      deps.reread = async (page, box, factor) => garbled((await reread(page, box, factor)) ?? []);
      const report = await reviewOcrFindings(doc, [before], deps);
      expect(report.dropped).toEqual([]);
      const kept = mismatches(report.results[0]!);
      expect(kept.length).toBeGreaterThan(0);
      for (const f of kept) {
        expect(f.message).toMatch(/£1,311\.00.*confirmed on a sharper re-reading/);
        expect(f.evidence?.ocr).toMatchObject({ verified: true, reread: true });
      }
    });

    it("the same garbled re-reading that reads a misread figure right still refutes the mismatch", async () => {
      // The page prints £1,371.00; the first pass misread it as £1,311.00 at 78 %.
      const doc = await ocrModel(tampered(78));
      const before = await arithmetic(doc);
      const deps = depsFrom(await ocrModel());
      const reread = deps.reread;
      deps.reread = async (page, box, factor) => garbled((await reread(page, box, factor)) ?? []);
      const report = await reviewOcrFindings(doc, [before], deps);
      expect(mismatches(report.results[0]!)).toEqual([]);
      expect(report.dropped.length).toBeGreaterThan(0);
    });

    it("takes a date or label from the re-reading only when it read it more surely than the first pass", () => {
      const run = (text: string, x: number, confidence: number): TextRun => ({
        text,
        bbox: [x, 100, x + 40, 110],
        x,
        y: 100,
        size: 10,
        font: "",
        fontEmbedded: false,
        renderMode: 0,
        fill: null,
        alpha: 1,
        upright: true,
        order: 0,
        confidence,
      });
      const first = [run("11/06/2025", 0, 60), run("Balance", 50, 95), run("£57.36", 100, 78)];
      const again = [
        { ...run("11/06/2025", 1, 96), y: 101 },
        run("Ralanca", 51, 35),
        { ...run("£57.86", 101, 97), y: 102 },
        run("£1.00", 200, 90),
        run("7", 300, 35),
      ];
      const texts = mergedReading(first, again).map((r) => `${r.text}@${r.y}`);
      // The figure from the re-reading, on the first pass's line; the date from the re-reading (96 % against
      // 60 %); the label from the first pass (95 % against 35 %); a word only the re-reading has, when sure.
      expect(texts.sort()).toEqual(["11/06/2025@100", "Balance@100", "£1.00@100", "£57.86@100"].sort());
    });
  });

  it("figures one misread character apart (a digit, a lost decimal point) are a note unless a re-read confirms", async () => {
    const doc = await ocrModel((runs) => {
      runOf(runs, "£57.86").text = "£57.36";
      return runs;
    });
    const before = await arithmetic(doc);
    expect(mismatches(before).some((f) => f.severity === 9)).toBe(true);
    const report = await reviewOcrFindings(doc, [before], depsFrom(undefined));
    const notes = mismatches(report.results[0]!);
    expect(notes.length).toBeGreaterThan(0);
    for (const f of notes) {
      expect(f.severity).toBeLessThanOrEqual(OCR_REVIEW.noteSeverity);
      expect((f.evidence?.ocr as { explanations: string[] } | undefined)?.explanations).toContain(
        "one_character",
      );
    }
  });

  it("a row the OCR lost or misread does not make the table reader accuse the document", async () => {
    // The OCR lost a row's balance, or a row's date lost its slash: the table reader adds a row without a
    // balance to the next one and keeps a row without a date in its table, so no balance breaks at all.
    const lostBalance = await ocrModel((runs) => {
      const balance = runOf(runs, "£3,278.22");
      return runs.filter((r) => r !== balance);
    });
    const misreadDate = await ocrModel((runs) => {
      for (const r of rowOf(runs, "SAINSBURYS"))
        if (/^\d\d\/06\/2025$/.test(r.text.trim())) r.text = r.text.replace("/", "");
      return runs;
    });
    for (const doc of [lostBalance, misreadDate]) {
      const report = await reviewOcrFindings(doc, [await arithmetic(doc)], depsFrom(undefined));
      expect(mismatches(report.results[0]!).filter((f) => (f.severity ?? 0) >= 5)).toEqual([]);
    }
  });

  it("a difference equal to an amount printed elsewhere on the page makes a mismatch doubtful", async () => {
    // A balance off by exactly an amount the page prints (a row the OCR read into the wrong place).
    const doc = await ocrModel();
    const made: CheckResult = {
      checkId: "text.arithmetic",
      outcome: "flag",
      severity: 9,
      summary: "x",
      findings: [
        {
          code: "running_balance_mismatch",
          message: "The balance £3,336.08 should be £3,278.22.",
          page: 1,
          evidence: { printed: "£3,336.08", expected: "£3,278.22" },
          severity: 9,
        },
      ],
    };
    const report = await reviewOcrFindings(doc, [made], depsFrom(undefined));
    const f = report.results[0]!.findings[0]!;
    expect(f.severity).toBeLessThanOrEqual(OCR_REVIEW.noteSeverity);
    expect((f.evidence?.ocr as { explanations: string[] } | undefined)?.explanations).toContain(
      "difference_printed",
    );
  });

  it("a finding whose values are nowhere among the OCR'd words cannot be verified: a note", async () => {
    const doc = await ocrModel();
    const made: CheckResult = {
      checkId: "text.identifiers",
      outcome: "flag",
      severity: 7,
      summary: "x",
      findings: [
        {
          code: "iban_invalid",
          message: "The IBAN GB00 XXXX 9999 8888 77 fails its check digits.",
          page: 1,
          evidence: { iban: "GB00 XXXX 9999 8888 77" },
          severity: 7,
        },
      ],
    };
    const report = await reviewOcrFindings(doc, [made], depsFrom(undefined));
    const f = report.results[0]!.findings[0]!;
    expect(f.severity).toBe(OCR_REVIEW.noteSeverity);
    expect((f.evidence?.ocr as { explanations: string[] } | undefined)?.explanations).toContain(
      "not_located",
    );
  });

  it("an arithmetic note whose figures were all read confidently becomes an anomaly (it can corroborate), not proof", async () => {
    const doc = await ocrModel();
    const runs = doc.pdf!.pages[0]!.layout!.runs;
    const amount = runs.find((r) => /^£\d[\d,]*\.\d\d$/.test(r.text.trim()) && r.text.length >= 6)!;
    const made = (checkId: string, readingConfidence: number): CheckResult => ({
      checkId,
      outcome: "flag",
      severity: 2,
      summary: "x",
      findings: [
        {
          code: "total_mismatch",
          message: `The total ${amount.text} is not the sum of the amounts above it.`,
          page: 1,
          bbox: [...amount.bbox] as BoxTuple,
          evidence: { printed: amount.text, expected: "£0.07", readingConfidence },
          severity: 2,
        },
      ],
    });
    const raised = (await reviewOcrFindings(doc, [made("text.arithmetic", 0.6)], depsFrom(undefined)))
      .results[0]!;
    expect(raised.findings[0]!.severity).toBe(OCR_REVIEW.confirmedNoteSeverity);
    expect(raised.findings[0]!.message).toMatch(/counts as an anomaly/);
    // A reading too weak, another check, or a figure the OCR doubted: no change.
    const weak = (await reviewOcrFindings(doc, [made("text.arithmetic", 0.3)], depsFrom(undefined)))
      .results[0]!;
    expect(weak.findings[0]!.severity).toBe(2);
    const other = (await reviewOcrFindings(doc, [made("text.identifiers", 0.6)], depsFrom(undefined)))
      .results[0]!;
    expect(other.findings[0]!.severity).toBe(2);
    const doubted = await ocrModel((rs) =>
      rs.map((r) => (r.text === amount.text ? { ...r, confidence: 60 } : r)),
    );
    const low = (await reviewOcrFindings(doubted, [made("text.arithmetic", 0.6)], depsFrom(undefined)))
      .results[0]!;
    expect(low.findings[0]!.severity).toBeLessThan(OCR_REVIEW.confirmedNoteSeverity);
  });

  it("leaves documents without OCR'd pages alone", async () => {
    const doc = await modelOf(pdf, { docType: "bank_statement", region: "GB" });
    const r = await arithmetic(doc);
    const report = await reviewOcrFindings(doc, [r], depsFrom(undefined));
    expect(report.results[0]).toBe(r);
  });
});
