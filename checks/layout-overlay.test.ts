import { describe, expect, it } from "vitest";
import { makePng } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { layoutOverlayCheck } from "./layout-overlay.js";
import { genuineResults, runOn, tamperedResult } from "./testdata/text-check-kit.js";

const check = layoutOverlayCheck;

describe("layout.overlay", () => {
  it("passes genuine documents of every type and region", async () => {
    for (const { name, result } of await genuineResults(check, [11, 12])) {
      expect(result.outcome, name).toBe("pass");
      expect(result.findings, name).toEqual([]);
    }
  }, 120_000);

  it("finds a value hidden under a white box with a new value on top", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const { t, result } = await tamperedResult(check, 5, "white_box_overlay", region);
      const f = result.findings.find((x) => x.code === "text_covered_and_replaced");
      expect(f, region).toBeDefined();
      expect(f?.severity).toBe(9);
      expect(f?.page).toBe(t.page);
      expect(f?.evidence).toMatchObject({ hidden: [t.original], shown: [t.replacement] });
      expect(f?.message).toContain(t.original);
      expect(f?.message).toContain(t.replacement);
      expect(f?.bbox).toHaveLength(4);
      expect(result.outcome).toBe("flag");
      expect(result.severity).toBeGreaterThanOrEqual(9);
    }
  });

  it("finds one value printed over another", async () => {
    const { t, result } = await tamperedResult(check, 6, "text_over_text", "GB");
    const f = result.findings.find((x) => x.code === "text_over_text");
    expect(f?.evidence).toMatchObject({ under: t.original, over: t.replacement });
    expect(f?.severity).toBe(8);
  });

  it("finds invisible, white-on-white and off-page text", async () => {
    const cases = [
      ["invisible_text", "invisible_text"],
      ["white_text", "text_same_colour_as_background"],
      ["off_page_text", "text_outside_page"],
    ] as const;
    for (const [kind, code] of cases) {
      const { t, result } = await tamperedResult(check, 7, kind, "DE");
      expect(result.outcome, kind).toBe("flag");
      const f = result.findings.find((x) => x.code === code);
      expect(f?.evidence?.texts, kind).toEqual([t.replacement]);
      expect(f?.page).toBe(1);
    }
  });

  it("skips images and stays bounded on hostile pages", async () => {
    const image = await runOn(check, makePng(1), {});
    expect(image.outcome).toBe("skip");
    for (const kind of HOSTILE_TEXT_KINDS) {
      const r = await runOn(check, await makeHostileTextPdf(kind), { docType: "other" });
      expect(["pass", "flag", "skip"], kind).toContain(r.outcome);
      expect(r.summary.length, kind).toBeGreaterThan(20);
      if (kind === "many_runs") expect(r.summary).toMatch(/read only in part/);
      if (kind === "garbage_ops") expect(r.findings.map((f) => f.code)).toContain("invisible_text");
    }
  }, 120_000);
});
