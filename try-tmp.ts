import { readFileSync, readdirSync } from "node:fs";
import { decodeToPixels } from "./document/pixels/page-pixels.js";
import { layoutOf, grow } from "./document/pixels/ink-layout.js";
import { readJpeg } from "./document/pixels/jpeg-markers.js";
import { dqAnalyse, countIn } from "./checks/pixels-compression/double-quantisation.js";
import { gridVotes } from "./checks/pixels-compression/grid-votes.js";
const root = readdirSync("/root/.cache/docverify/captures").map((k) => `/root/.cache/docverify/captures/${k}`)[0]!;
for (const n of ["digit_replace--dev-000-flatbed_scan-bank_statement-GB", "white_box--dev-008-scanning_app-utility_bill-GB", "splice--dev-001-scanning_app-payslip-US", "dev-000-flatbed_scan-bank_statement-GB"]) {
  const f = JSON.parse(readFileSync(`${root}/dev/${n}.json`, "utf8"));
  const b = readFileSync(f.file);
  const info = readJpeg(b);
  const d = await decodeToPixels(b);
  const l = layoutOf({ grey: d.grey, width: d.width, height: d.height });
  const regions = l.lines.map((x) => grow(x.box, 6, d.width, d.height));
  const t0 = performance.now();
  const v = gridVotes(d.grey, d.width, d.height, regions);
  const t1 = performance.now();
  const bw = Math.floor(d.width / 8);
  const text = new Uint8Array(bw * Math.floor(d.height / 8));
  for (const r of regions) for (let y = Math.floor(r[1] / 8); y < Math.ceil(r[3] / 8); y++) for (let x = Math.floor(r[0] / 8); x < Math.ceil(r[2] / 8); x++) text[y * bw + x] = 1;
  const dq = dqAnalyse(d.grey, d.width, d.height, info.tables.get(0)!, 0, 0, (x, y) => text[y * bw + x] === 1);
  const t2 = performance.now();
  console.log(n, "q", info.quality, "main", v.main, v.mainLogNfa.toFixed(0), "voters", v.voters, "foreign", v.foreign.slice(0, 3).map((r) => `${r.box}:${r.logNfa.toFixed(1)}`), Math.round(t1 - t0), "ms");
  console.log("  dq", dq ? JSON.stringify({ ...dq.model, freqs: dq.model.freqs.slice(0, 8) }) : "none", Math.round(t2 - t1), "ms");
  if (dq && f.box) { const c = countIn(dq.blocks, f.box); console.log("  box", c, "rate", (c.off / Math.max(1, c.n)).toFixed(2)); }
}
