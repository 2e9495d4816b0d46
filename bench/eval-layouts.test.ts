import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import type { DocOutcome } from "./eval-harness.js";
import { DEV_PRODUCERS, HELDOUT_PRODUCERS, layoutsPlan } from "../fixtures/layouts/plan.js";
import { checkFpRows, formatHeldout, withoutFindings } from "./eval-layouts.js";
import { devDrawPlan, FIRST_DEV_DRAW } from "./layouts-devdraw.js";

const flag = (checkId: string, ...findings: [string, number][]): CheckResult => ({
  checkId,
  outcome: "flag",
  severity: Math.max(...findings.map(([, s]) => s)),
  summary: `${checkId} flagged`,
  findings: findings.map(([code, severity]) => ({ code, message: code, severity })),
});

function doc(id: string, o: Partial<DocOutcome> & { checks?: CheckResult[] }): DocOutcome {
  return {
    id,
    set: "layouts-heldout",
    label: "genuine",
    docType: "invoice",
    region: "DE",
    variant: "",
    score: 0,
    classifiedType: "invoice",
    agentInput: {
      declaredDocType: "invoice",
      region: "DE",
      text: "Rechnung",
      checks: o.checks ?? [],
      discovered: [],
    },
    ms: { prepare: 0, check: 0, agent: 0, total: 0 },
    ...o,
  };
}

describe("the generated-layout report", () => {
  it("leaves out one check, or one finding code (a check left without findings passes)", () => {
    const checks = [
      flag("fonts.consistency", ["value_font_differs", 8], ["cell_mixed_fonts", 4]),
      flag("metadata.producer", ["producer_chain_rewritten", 5]),
    ];
    expect(withoutFindings(checks, "metadata.producer").map((c) => c.checkId)).toEqual(["fonts.consistency"]);
    const noValue = withoutFindings(checks, "fonts.consistency", "value_font_differs");
    expect(noValue[0]).toMatchObject({
      outcome: "flag",
      severity: 4,
      findings: [{ code: "cell_mixed_fonts" }],
    });
    const none = withoutFindings(noValue, "fonts.consistency", "cell_mixed_fonts");
    expect(none[0]).toMatchObject({ outcome: "pass", severity: 0, findings: [] });
  });

  it("counts per check and per code the genuine documents it flags and those it alone lifts to 50", () => {
    const decisive = [flag("fonts.consistency", ["value_font_differs", 9])];
    const both = [
      flag("fonts.consistency", ["value_font_differs", 9]),
      flag("text.arithmetic", ["total_mismatch", 9]),
    ];
    const docs = [
      doc("a", { score: 97, checks: decisive }),
      doc("b", { score: 99, checks: both }),
      doc("c", { score: 10, checks: [flag("metadata.producer", ["producer_chain_rewritten", 2])] }),
      doc("t", { label: "tampered", tamper: "x", score: 99, checks: decisive }),
    ];
    const t = checkFpRows(docs);
    expect(t.n).toBe(3);
    expect(t.fp).toBe(2);
    const row = (k: string) => [...t.checks, ...t.codes].find((r) => r.key === k);
    // Decisive on a only: on b, text.arithmetic still decides without fonts.consistency.
    expect(row("fonts.consistency")).toMatchObject({ flagged: 2, decisive: 1 });
    expect(row("fonts.consistency value_font_differs")).toMatchObject({ flagged: 2, decisive: 1 });
    expect(row("text.arithmetic")).toMatchObject({ flagged: 1, decisive: 0 });
    expect(row("metadata.producer")).toMatchObject({ flagged: 1, decisive: 0 });
  });

  it("never names a held-out document", () => {
    const docs = [
      doc("ho-secret-genuine-1", {
        score: 97,
        group: "held-out producers",
        family: "tcpdf",
        checks: [flag("fonts.consistency", ["value_font_differs", 9])],
      }),
      doc("ho-secret-genuine-2", {
        score: 3,
        group: "held-out layouts on development producers",
        family: "fop",
      }),
      doc("qpdf--ho-secret-genuine-2", {
        label: "tampered",
        tamper: "qpdf_same_font_edit",
        originalId: "ho-secret-genuine-2",
        originalScore: 3,
        score: 20,
        family: "fop",
        group: "held-out layouts on development producers",
        arithmetic: "kept",
      }),
    ];
    const report = formatHeldout(docs, "draw 1");
    expect(report).not.toMatch(/secret/);
    expect(report).toMatch(/held-out producers/);
    expect(report).toMatch(/fonts\.consistency value_font_differs/);
    expect(report).toMatch(/qpdf_same_font_edit/);
  });
});

describe("a development draw of the generated layouts", () => {
  it("refuses the draws reserved for held-out measurement", () => {
    for (const draw of [1, 5, 39, 0, 40.5])
      expect(() => devDrawPlan(draw), String(draw)).toThrow(/reserved for held-out measurement/);
    expect(FIRST_DEV_DRAW).toBe(40);
  });

  it("keeps only the development producers of the held-out plan of its draw, with their tampered copies", () => {
    const plan = devDrawPlan(40);
    const heldout = layoutsPlan("heldout", 40);
    expect(new Set(plan.genuine.map((g) => g.producer))).toEqual(new Set(DEV_PRODUCERS));
    for (const p of HELDOUT_PRODUCERS) {
      expect(heldout.genuine.some((g) => g.producer === p)).toBe(true);
      expect(plan.genuine.some((g) => g.producer === p)).toBe(false);
    }
    expect(plan.genuine).toEqual(heldout.genuine.filter((g) => DEV_PRODUCERS.includes(g.producer)));
    const ids = new Set(plan.genuine.map((g) => g.id));
    expect(plan.tampered.length).toBeGreaterThan(0);
    expect(plan.tampered.every((t) => ids.has(t.originalId))).toBe(true);
    expect(plan.tampered).toEqual(heldout.tampered.filter((t) => ids.has(t.originalId)));
    // Fresh seeds: none of the development set's, none of draw 41's.
    const seeds = new Set(plan.genuine.map((g) => g.seed));
    expect(layoutsPlan("dev").genuine.some((g) => seeds.has(g.seed))).toBe(false);
    expect(devDrawPlan(41).genuine.some((g) => seeds.has(g.seed))).toBe(false);
  });
});
