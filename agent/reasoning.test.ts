import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import {
  capReasoning,
  clipBytes,
  formatEvidence,
  groupsOf,
  REASONING_LIMITS,
  withArticle,
} from "./reasoning.js";
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
      /^High risk \(score \d+\/100\): decided by proof: metadata\.dates modified_before_created \(severity 8(, page \d+)?\), though 1 check could not be completed\.$/,
    );
    expect(paragraphs[1]).toContain("declared as a bank statement, and its text agrees");

    for (const check of checks) {
      for (const finding of check.findings) {
        expect(text).toContain(finding.message.replace(/\.$/, ""));
        for (const value of Object.values(finding.evidence ?? {})) {
          expect(text).toContain(typeof value === "string" ? value : JSON.stringify(value));
        }
        expect(text).toContain(`${check.checkId} ${finding.code}`);
      }
    }
    // Each group leads with its headline (numbered as on the page images), where it is, and its severity.
    expect(text).toContain(
      "2. The Info dictionary and the XMP metadata name different creation dates, page 3. Evidence: infoCreated: 2025-04-02",
    );
    expect(text).toContain("3. The closing balance is set in Arial while the column uses Helvetica, page 1.");
    expect(text).toContain("Evidence: created: 2025-04-02T10:00:00Z; modified: 2024-11-30T08:12:00Z.");
    expect(text).toMatch(
      /Score: metadata\.dates contributed \d+ points; fonts\.mixed contributed \d+ points\./,
    );
    expect(text).toContain("Checks that found nothing suspicious: file.type.");
    expect(text).toContain("Also noted in the document: xmp_present.");
    expect(text).toContain("The check ocr.text could not be completed (OCR timed out on page 2)");
    expect(text).toContain("The check signature.pdf did not apply: The PDF carries no digital signature.");
    expect(paragraphs.at(-1)).toContain("does not prove it");
    expect(paragraphs.at(-1)).toContain("reviewed by a person");
    expect(text.indexOf("1. The document claims")).toBeLessThan(text.indexOf("3. The closing balance"));
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

describe("the reasoning's cap (REASONING_LIMITS)", () => {
  /** A genuine-looking long manual: one check, hundreds of findings of many kinds on many pages. */
  function manyFindings(n: number, codes: number): CheckResult[] {
    const long = "A long explanation of what this check saw on the page and why it might matter. ".repeat(20);
    return [
      {
        checkId: "fonts.consistency",
        outcome: "flag",
        severity: 7,
        summary: long,
        findings: Array.from({ length: n }, (_, i) => ({
          code: `pattern_${i % codes}`,
          message: `On page ${1 + (i % 36)}, ${long}`,
          page: 1 + (i % 36),
          bbox: [50 + (i % 7) * 60, 100 + (i % 11) * 50, 90 + (i % 7) * 60, 112 + (i % 11) * 50],
          evidence: { text: long, odd: "x".repeat(400), font: "CMTT12" },
          severity: 2 + (i % 6),
        })),
      },
      ...Array.from({ length: 8 }, (_, k) => ({
        checkId: `other.check${k}`,
        outcome: "skip" as const,
        severity: 0,
        summary: long,
        findings: [],
      })),
    ];
  }

  it.each([
    [843, 1],
    [843, 40],
    [20_000, 300],
  ])("%i findings of %i kinds: leads with at most 8 groups and stays within 4 KB", async (n, codes) => {
    const checks = manyFindings(n, codes);
    const verdict = await createRulesEngine().analyze({
      declaredDocType: "other",
      region: "US",
      text: TEXT,
      checks,
      discovered: ["metadata_present"],
    });
    const text = verdict.reasoning ?? "";
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(REASONING_LIMITS.bytes);
    const cited = text.split("\n").filter((l) => /^\d+\. /.test(l));
    expect(cited.length).toBeGreaterThanOrEqual(1);
    expect(cited.length).toBeLessThanOrEqual(REASONING_LIMITS.groups);
    expect(text.split("\n\n")[0]).toMatch(/^(High|Moderate) risk/);
    expect(text).toContain(`flagged ${n} findings`);
    expect(text.trimEnd().endsWith("before any decision is made.")).toBe(true);
    if (codes === 1) expect(cited[0]).toMatch(/Pattern 0 \(fonts\.consistency\) on 36 pages: 1–36/);
    else expect(text).toMatch(/… and \d+ further groups?/);
  });

  it("uses the groups the check step stored, with their numbers and headlines", async () => {
    const groups = groupsOf(checks).map((g) => ({ ...g, headline: `${g.headline} (stored)` }));
    const verdict = await createRulesEngine().analyze({
      declaredDocType: "bank_statement",
      region: "GB",
      text: TEXT,
      checks,
      discovered: [],
      groups,
    });
    expect(verdict.reasoning).toContain("(stored).");
  });

  it("capReasoning drops group lines first, then clips the middle, keeping the opening and the closing", () => {
    const findings = [
      "Findings (9 findings …):",
      ...Array.from({ length: 9 }, (_, i) => `${i + 1}. ${"w".repeat(300)}`),
      "Score: x.",
    ];
    const text = capReasoning(["Opening.", "Type.", findings.join("\n"), "L".repeat(3000), "Closing."], 2000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000);
    expect(text.startsWith("Opening.\n\nType.\n\nFindings (")).toBe(true);
    expect(text).toMatch(/… and \d+ further groups in the evidence\.\nScore: x\./);
    expect(text.endsWith("Closing.")).toBe(true);
    expect(clipBytes("ééé", 5)).toBe("é…");
  });
});
