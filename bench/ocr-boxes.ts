/**
 * `node --import tsx bench/ocr-boxes.ts [--size 8] [--only <id part>] [--out /tmp/ocr-boxes]`: the OCR's word
 * boxes drawn over the page images the pixel checks read (document/pixels/page-pixels.ts), for the development
 * captures: amounts in red, other words in blue, one PNG per page in --out. Prints, per page, how the page was
 * read and how many of the amounts the OCR read cover at least 3 ink glyphs (what pixels.amounts needs).
 * Genuine captures only unless --only names some. Development part only: held-out captures are not opened.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import pino from "pino";
import sharp from "sharp";
import { isAmountText } from "../checks/pixels-amounts/amounts.js";
import { ocrRunsOf } from "../checks/pixels-amounts/pixels-amounts.js";
import type { BoxTuple } from "../core/page-geometry.js";
import { createOcrEngine } from "../document/ocr.js";
import { ocrForStep } from "../document/ocr-pass.js";
import { layoutOf } from "../document/pixels/ink-layout.js";
import { type PagePixels, pagePixels } from "../document/pixels/page-pixels.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { capturesSet } from "../fixtures/captures/set.js";

const args = process.argv.slice(2);
const arg = (name: string, def?: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const size = Number(arg("--size", "8"));
const only = arg("--only");
const out = arg("--out", "/tmp/ocr-boxes")!;

/** A box in page units back to the page image's pixels (the inverse of `toPageBox`). */
function toPixels(page: PagePixels, b: BoxTuple): BoxTuple {
  if (page.source === "image-file") return b;
  const v = page.toPageBox([0, 0, page.width, page.height]);
  const sx = (v[2] - v[0]) / page.width;
  const sy = (v[3] - v[1]) / page.height;
  return [(b[0] - v[0]) / sx, (v[3] - b[3]) / sy, (b[2] - v[0]) / sx, (v[3] - b[1]) / sy];
}

function frame(page: PagePixels, rgb: Uint8Array, b: BoxTuple, colour: number[], thick: number): void {
  const [x0, y0, x1, y1] = b.map((v) => Math.round(v)) as BoxTuple;
  const put = (x: number, y: number) => {
    if (x >= 0 && y >= 0 && x < page.width && y < page.height) rgb.set(colour, (y * page.width + x) * 3);
  };
  for (let k = 0; k < thick; k++) {
    for (let x = x0 - k; x <= x1 + k; x++) {
      put(x, y0 - k);
      put(x, y1 + k);
    }
    for (let y = y0 - k; y <= y1 + k; y++) {
      put(x0 - k, y);
      put(x1 + k, y);
    }
  }
}

async function main() {
  const s = await capturesSet({ part: "dev", size });
  await mkdir(out, { recursive: true });
  const engine = await createOcrEngine();
  const log = pino({ level: "silent" });
  try {
    for (const f of s.fixtures) {
      if (only ? !f.id.includes(only) : f.label !== "genuine") continue;
      const doc = await modelOf(new Uint8Array(await readFile(f.file)), {
        filename: path.basename(f.file),
        docType: f.docType,
        region: f.region,
      });
      await ocrForStep(doc, { engine, timeoutMs: 120_000, log });
      for (const page of (await pagePixels(doc)).pages) {
        const layout = layoutOf(page);
        const centres = layout.glyphs
          .filter((g) => g.line >= 0)
          .map((g) => [(g.box[0] + g.box[2]) / 2, (g.box[1] + g.box[3]) / 2] as const);
        const rgb = new Uint8Array(page.rgb);
        let amounts = 0;
        let onInk = 0;
        for (const r of ocrRunsOf(doc, page.page)) {
          const b = toPixels(page, r.bbox);
          const amount = isAmountText(r.text);
          if (amount) {
            amounts++;
            const inside = centres.filter(([x, y]) => x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3]);
            if (inside.length >= 3) onInk++;
          }
          frame(page, rgb, b, amount ? [255, 0, 0] : [0, 0, 255], amount ? 2 : 1);
        }
        const reading = (doc.pdf?.pages ?? doc.imagePages ?? []).find(
          (p) => p.number === page.page,
        )?.ocrReading;
        console.log(
          `${f.id} page ${page.page} (${page.source} ${page.width}×${page.height}, ${reading?.words ?? 0} words, perspective ${reading?.perspective ?? false}): amounts on ink ${onInk}/${amounts}`,
        );
        await sharp(rgb, { raw: { width: page.width, height: page.height, channels: 3 } })
          .png()
          .toFile(path.join(out, `${f.id}-p${page.page}.png`));
      }
    }
  } finally {
    await engine.terminate();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
