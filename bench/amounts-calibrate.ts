/**
 * `node --import tsx bench/amounts-calibrate.ts [--part dev] [--size 8]`: the development loop of
 * pixels.amounts (checks/pixels-amounts/amounts.ts; docs/decisions.md): OCRs each capture of one
 * part once, then prints every amount whose log10 NFA falls below a loose line, marked ON when it covers
 * the changed box of a tampered copy. Run it on `--part dev` only; the held-out part is scored by
 * `npm run eval -- --set captures`.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import {
  AMOUNT_THRESHOLDS,
  amountOutliers,
  amountsOnPage,
  amountTwins,
} from "../checks/pixels-amounts/amounts.js";
import { ocrRunsOf } from "../checks/pixels-amounts/pixels-amounts.js";
import { type GlyphFeatures, glyphFeatures } from "../checks/pixels-glyphs/glyph-features.js";
import { createOcrEngine } from "../document/ocr.js";
import { ocrForStep } from "../document/ocr-pass.js";
import { layoutOf } from "../document/pixels/ink-layout.js";
import { pagePixels } from "../document/pixels/page-pixels.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { type CapturePart, capturesSet } from "../fixtures/captures/set.js";

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const part = arg("--part", "dev") as CapturePart;
if (part !== "dev") throw new Error("calibrate on the development part only");
const size = Number(arg("--size", "8"));

async function main() {
  const s = await capturesSet({ part, size });
  const engine = await createOcrEngine();
  const log = pino({ level: "silent" });
  const loose = { ...AMOUNT_THRESHOLDS, logNfa: 3, glyphLogNfa: 3, zEach: 2 };
  try {
    for (const f of s.fixtures) {
      const doc = await modelOf(new Uint8Array(await readFile(f.file)), {
        filename: path.basename(f.file),
        docType: f.docType,
        region: f.region,
      });
      await ocrForStep(doc, { engine, timeoutMs: 120_000, log });
      const { pages } = await pagePixels(doc);
      const lines: string[] = [];
      for (const page of pages) {
        const layout = layoutOf(page);
        const th = layout.textHeight;
        const glyphs = layout.glyphs.filter(
          (g) => g.line >= 0 && g.box[3] - g.box[1] >= th * 0.6 && g.box[3] - g.box[1] <= th * 2.2,
        );
        const feats = new Map<number, GlyphFeatures>();
        for (const g of glyphs) {
          const x = glyphFeatures(page, layout, g.id);
          if (x) feats.set(g.id, x);
        }
        const amounts = amountsOnPage(
          page,
          layout,
          ocrRunsOf(doc, page.page),
          glyphs.map((g) => g.id),
        );
        const out = amountOutliers(page, layout, amounts, feats, loose);
        for (const o of out.slice(0, 4)) {
          const b = o.amount.box;
          const on =
            f.box && b[0] < f.box[2] && f.box[0] < b[2] && b[1] < f.box[3] && f.box[1] < b[3] ? "ON " : "   ";
          lines.push(
            `   ${on} ${o.logNfa.toFixed(1).padStart(6)} ${o.glyph !== undefined ? "glyph" : "whole"} ${o.amount.text} ${JSON.stringify(o.z)}`,
          );
        }
        const twins = amountTwins(page, layout, amounts, {
          ratio: 0.9,
          next: 0.9,
          minGlyphs: 20,
          areaTolerance: Number(arg("--area", "0.35")),
        });
        for (const w of twins.slice(0, 4)) {
          const b = layout.glyphs[w.glyph]!.box;
          const on =
            f.box && b[0] < f.box[2] + 2 && f.box[0] - 2 < b[2] && b[1] < f.box[3] + 2 && f.box[1] - 2 < b[3]
              ? "ON "
              : "   ";
          lines.push(
            `   ${on} twin ${w.amount.text} ~ ${w.source.text} d1 ${w.d1.toFixed(2)} d2 ${w.d2.toFixed(2)} q05 ${w.q05.toFixed(2)} r ${(w.d1 / w.q05).toFixed(2)} n ${(w.d1 / w.d2).toFixed(2)}`,
          );
        }
        lines.unshift(`  page ${page.page}: ${amounts.length} amounts`);
      }
      console.log(
        `${f.label === "genuine" ? "G" : "T"} ${f.id}${f.how ? ` (${f.how})` : ""}\n${lines.join("\n")}`,
      );
    }
  } finally {
    await engine.terminate();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
