import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { computeMetrics, type DocOutcome, linkOriginals } from "./eval-harness.js";
import { budgetLines, codeTable, formatBudget } from "./eval-report.js";
import { realworldDevSet } from "./eval-sets.js";

const flag = (checkId: string, severity: number, ...codes: string[]): CheckResult => ({
  checkId,
  outcome: "flag",
  severity,
  summary: `${checkId} flagged`,
  findings: codes.map((code) => ({ code, message: code, severity })),
});
const pass = (checkId: string): CheckResult => ({
  checkId,
  outcome: "pass",
  severity: 0,
  summary: "ok",
  findings: [],
});

function doc(id: string, o: Partial<DocOutcome> & { checks?: CheckResult[] }): DocOutcome {
  const checks = o.checks ?? [];
  return {
    id,
    set: "realworld-dev",
    label: "genuine",
    docType: "invoice",
    region: "DE",
    variant: "",
    score: 0,
    classifiedType: "invoice",
    agentInput: {
      declaredDocType: "invoice",
      region: "DE",
      text: "Rechnung Rechnungsnummer 1",
      checks,
      discovered: [],
    },
    ms: { prepare: 0, check: 0, agent: 0, total: 0 },
    ...o,
  };
}

describe("eval metrics", () => {
  it("counts a tamper kind only on copies of originals below 50, and leaves helpers out of the genuine figures", () => {
    const docs = linkOriginals([
      doc("o1", { helper: true, score: 10 }),
      doc("o2", { helper: true, score: 70 }),
      doc("t1", { label: "tampered", tamper: "x", originalId: "o1", score: 80 }),
      doc("t2", { label: "tampered", tamper: "x", originalId: "o2", score: 90 }),
      doc("t3", { label: "tampered", tamper: "y", originalId: "o1", score: 20, exempt: true }),
      doc("g1", { score: 60 }),
      doc("g2", { score: 10 }),
    ]);
    const m = computeMetrics(docs);
    expect(m.genuine).toBe(2);
    expect(m.fpr).toBe(0.5);
    expect(m.perKind.find((k) => k.kind === "x")).toMatchObject({
      n: 1,
      detected: 1,
      excluded: 1,
      exempt: false,
    });
    expect(m.perKind.find((k) => k.kind === "y")).toMatchObject({ n: 1, detected: 0, exempt: true });
  });

  it("gives the AUC over all documents, and beside it the AUC with the exempt kinds' copies left out", () => {
    const docs = [
      doc("t1", { label: "tampered", tamper: "x", score: 80 }),
      doc("t2", { label: "tampered", tamper: "y", score: 5, exempt: true }),
      doc("g1", { score: 10 }),
      doc("g2", { score: 0 }),
    ];
    // t1 ranks above both genuine (2 of 2), t2 above one of them (1 of 2): 3 of 4 pairs.
    expect(computeMetrics(docs).auc).toBe(0.75);
    expect(computeMetrics(docs).aucNonExempt).toBe(1);
    expect(computeMetrics(docs.filter((d) => !d.exempt)).aucNonExempt).toBeNaN();
  });

  it("tables documents per check/code, genuine vs tampered", () => {
    const table = codeTable([
      doc("g1", { checks: [flag("fonts.consistency", 7, "cell_mixed_fonts", "cell_mixed_fonts")] }),
      doc("g2", { checks: [flag("fonts.consistency", 5, "cell_mixed_fonts")] }),
      doc("t1", { label: "tampered", checks: [flag("fonts.consistency", 8, "value_font_differs")] }),
    ]);
    expect(table).toMatch(/\| fonts\.consistency cell_mixed_fonts +\| +2 \| +3 \| +7 \| +0 \|/);
    expect(table).toMatch(/\| fonts\.consistency value_font_differs +\| +0 \| +0 \| +- \| +1 \|/);
  });

  it("calls a check decisive when a genuine document is at 50 or more only with it", () => {
    const alone = doc("alone", {
      score: 80,
      checks: [flag("layout.overlay", 9, "text_over_text"), pass("metadata.dates")],
    });
    const both = doc("both", {
      score: 95,
      checks: [flag("layout.overlay", 9, "text_over_text"), flag("text.arithmetic", 9, "line_item_mismatch")],
    });
    const synthetic = doc("synthetic", {
      set: "synthetic",
      score: 80,
      checks: [flag("qr.codes", 9, "qr_mismatch")],
    });
    const lines = budgetLines([alone, both, synthetic]);
    expect(lines.find((l) => l.checkId === "layout.overlay")).toMatchObject({
      flagged: 2,
      decisive: 1,
      n: 2,
      examples: ["alone"],
    });
    expect(lines.find((l) => l.checkId === "text.arithmetic")).toMatchObject({ flagged: 1, decisive: 0 });
    expect(lines.find((l) => l.checkId === "qr.codes")).toBeUndefined();
    expect(formatBudget(lines)).toMatch(
      /layout\.overlay +\| +2\/2 \(100\.0 %\) \| +OVER \| +1\/2 \(50\.0 %\) \| +OVER \|/,
    );
  });
});

describe("realworldDevSet", () => {
  it("reads the manifest in place and refuses a file whose sha256 differs", async () => {
    const shared = await mkdtemp(path.join(os.tmpdir(), "docverify-shared-"));
    try {
      await mkdir(path.join(shared, "realworld-dev", "docs"), { recursive: true });
      await writeFile(path.join(shared, "realworld-dev", "docs", "a.pdf"), "%PDF-1.4 genuine");
      await writeFile(
        path.join(shared, "realworld-dev", "manifest.json"),
        JSON.stringify({
          documents: [
            {
              file: "docs/a.pdf",
              source: "o/r:a.pdf",
              label: "genuine",
              declared_doc_type: "invoice",
              region: "DE",
              sha256: "0".repeat(64),
            },
          ],
        }),
      );
      const set = await realworldDevSet(shared);
      expect(set.items).toHaveLength(1);
      expect(set.items[0]).toMatchObject({
        id: "a",
        set: "realworld-dev",
        label: "genuine",
        docType: "invoice",
        region: "DE",
      });
      await expect(set.items[0]?.make()).rejects.toThrow(/sha256/);
      expect((await realworldDevSet(path.join(shared, "nowhere"))).skipped).toMatch(/manifest\.json/);
    } finally {
      await rm(shared, { recursive: true, force: true });
    }
  });
});
