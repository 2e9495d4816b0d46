import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { formatEvidence, withArticle } from "./reasoning.js";
import { createRulesEngine } from "./rules-engine.js";

const checks: CheckResult[] = [
  {
    checkId: "metadata.dates",
    outcome: "flag",
    severity: 8,
    summary: "Creation and modification dates contradict each other.",
    findings: [
      {
        code: "modified_before_created",
        message:
          "The document claims to have been modified before it was created, which points to edited metadata",
        severity: 8,
        evidence: { created: "2025-04-02T10:00:00Z", modified: "2024-11-30T08:12:00Z" },
      },
      {
        code: "info_xmp_disagree",
        message: "The Info dictionary and the XMP metadata name different creation dates.",
        severity: 5,
        page: 3,
        bbox: [72, 700.4, 300, 720],
        evidence: { infoCreated: "2025-04-02", xmpCreated: "2025-01-15", gapDays: 77 },
      },
    ],
  },
  {
    checkId: "fonts.mixed",
    outcome: "flag",
    severity: 4,
    summary: "One amount uses a different font from its column.",
    findings: [
      {
        code: "font_outlier",
        message: "The closing balance is set in Arial while the column uses Helvetica.",
        severity: 4,
        page: 1,
        evidence: { value: "£3,959.88", font: "ArialMT", columnFont: ["Helvetica", "Helvetica-Bold"] },
      },
    ],
  },
  { checkId: "file.type", outcome: "pass", severity: 0, summary: "Name and content agree.", findings: [] },
  {
    checkId: "ocr.text",
    outcome: "error",
    severity: 0,
    summary: "OCR timed out on page 2.",
    findings: [],
  },
  {
    checkId: "signature.pdf",
    outcome: "skip",
    severity: 0,
    summary: "The PDF carries no digital signature.",
    findings: [],
  },
];

const TEXT = "Bank statement\nSort code 20-45-77\nOpening balance 10.00\nClosing balance 3,959.88";

describe("reasoning", () => {
  it("covers the band, the type, every flagged finding with its evidence, limits and the closing note", async () => {
    const verdict = await createRulesEngine().analyze({
      declaredDocType: "bank_statement",
      region: "GB",
      text: TEXT,
      checks,
      discovered: ["xmp_present"],
    });
    const text = verdict.reasoning ?? "";
    const paragraphs = text.split("\n\n");
    expect(paragraphs[0]).toMatch(
      /^High risk \(score \d+\/100\): 2 checks flagged 3 findings, the strongest from metadata\.dates \(severity 8\), though 1 check could not be completed\.$/,
    );
    expect(paragraphs[1]).toContain("declared as a bank statement, and its text agrees");

    for (const check of checks) {
      for (const finding of check.findings) {
        expect(text).toContain(finding.message.replace(/\.$/, ""));
        for (const value of Object.values(finding.evidence ?? {})) {
          expect(text).toContain(typeof value === "string" ? value : JSON.stringify(value));
        }
        expect(text).toContain(`code ${finding.code}`);
      }
    }
    expect(text).toContain("[metadata.dates, page 3, area [72, 700, 300, 720]]");
    expect(text).toContain("[fonts.mixed, page 1]");
    expect(text).toContain("Evidence: created: 2025-04-02T10:00:00Z; modified: 2024-11-30T08:12:00Z.");
    expect(text).toContain("Checks that found nothing suspicious: file.type.");
    expect(text).toContain("Also noted in the document: xmp_present.");
    expect(text).toContain("The check ocr.text could not be completed (OCR timed out on page 2)");
    expect(text).toContain("The check signature.pdf did not apply: The PDF carries no digital signature.");
    expect(paragraphs.at(-1)).toContain("does not prove it");
    expect(paragraphs.at(-1)).toContain("reviewed by a person");
    expect(text.indexOf("metadata.dates]")).toBeLessThan(text.indexOf("fonts.mixed, page 1]"));
  });

  it("says so plainly when nothing was flagged", async () => {
    const verdict = await createRulesEngine().analyze({
      declaredDocType: "bank_statement",
      region: "GB",
      text: TEXT,
      checks: [checks[2] as CheckResult],
      discovered: [],
    });
    expect(verdict.reasoning).toMatch(/^Low risk \(score 0\/100\): no check flagged anything suspicious\./);
    expect(verdict.reasoning).not.toContain("Findings");
    expect(verdict.reasoning).not.toContain("Limits of this assessment");
  });

  it("formats evidence values of any kind", () => {
    expect(formatEvidence({ a: "x", b: 3, c: [1, 2], d: { e: true }, f: null })).toBe(
      'a: x; b: 3; c: [1,2]; d: {"e":true}; f: null',
    );
    expect(formatEvidence({ long: "y".repeat(500) })).toHaveLength("long: ".length + 301);
    expect(formatEvidence(undefined)).toBe("");
  });

  it("chooses the right article", () => {
    expect(withArticle("electricity bill")).toBe("an electricity bill");
    expect(withArticle("utility bill")).toBe("a utility bill");
    expect(withArticle("unidentified document")).toBe("an unidentified document");
    expect(withArticle("identity card")).toBe("an identity card");
    expect(withArticle("payslip")).toBe("a payslip");
  });
});
