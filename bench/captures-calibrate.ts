/**
 * `node --import tsx bench/captures-calibrate.ts [--part dev] [--size 12] [--receipts 40]`: runs only the
 * pixel checks (image.capture, pixels.*, jpeg.provenance) on the capture fixtures of one part and prints,
 * per capture class and tamper kind, which findings fired where (on the changed box or elsewhere) and the
 * time per page. The development loop of the thresholds (docs/decisions.md, "Pixel checks"): run it on
 * `--part dev` only; the held-out part is scored by `npm run eval -- --set captures`.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { CheckResult } from "../core/check-result.js";
import { modelOf } from "../document/testdata/model-kit.js";
import {
  type CaptureFixture,
  type CapturePart,
  capturesSet,
  realworldTamperedSet,
} from "../fixtures/captures/set.js";
import { PIXEL_CHECKS } from "../checks/registry.js";
import { SHARED_DIR } from "./eval-sets.js";

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? def) : def;
};
const part = arg("--part", "dev") as CapturePart;
const size = Number(arg("--size", "12"));
const receipts = Number(arg("--receipts", "0"));
const only = arg("--only", "");

interface Row {
  f: CaptureFixture;
  results: CheckResult[];
  ms: number;
}

function pixelBoxOf(r: CheckResult["findings"][number]): number[] | undefined {
  return (r.evidence?.pixelBox as number[] | undefined) ?? undefined;
}

function hits(box: number[] | undefined, b: number[]): boolean {
  if (!box) return false;
  const m = 6;
  return box[0]! < b[2]! + m && b[0]! - m < box[2]! && box[1]! < b[3]! + m && b[1]! - m < box[3]!;
}

async function main() {
  const progress = (l: string) => process.stderr.write(`${l}\n`);
  const sets: CaptureFixture[] = [];
  if (size > 0) {
    const s = await capturesSet({ part, size, progress });
    process.stderr.write(
      `captures ${part}: ${s.fixtures.length} (${s.generated} made, ${s.reused} reused) ${s.failed.length} failed ${JSON.stringify(s.failed).slice(0, 400)}\n`,
    );
    sets.push(...s.fixtures);
  }
  if (receipts > 0) {
    const r = await realworldTamperedSet({ shared: SHARED_DIR, limit: receipts, progress });
    process.stderr.write(
      `receipts: ${r.fixtures.length} ${r.failed.length} failed ${JSON.stringify(r.failed).slice(0, 400)}\n`,
    );
    sets.push(...r.fixtures.filter((f) => f.part === part));
  }
  const rows: Row[] = [];
  for (const f of sets) {
    if (only && !f.id.includes(only)) continue;
    const bytes = new Uint8Array(await readFile(f.file));
    const doc = await modelOf(bytes, {
      filename: path.basename(f.file),
      docType: f.docType,
      region: f.region,
    });
    const started = performance.now();
    const results: CheckResult[] = [];
    for (const c of PIXEL_CHECKS) if (c.appliesTo(doc)) results.push(await c.run(doc, { now: new Date() }));
    rows.push({ f, results, ms: performance.now() - started });
  }
  for (const r of rows) {
    const cap = r.results.find((c) => c.checkId === "image.capture")?.findings[0]?.evidence?.class;
    const fs = r.results.flatMap((c) =>
      c.findings.filter((x) => (x.severity ?? 0) > 0).map((x) => ({ c: c.checkId, x })),
    );
    const on = r.f.box ? fs.filter(({ x }) => hits(pixelBoxOf(x), r.f.box!)) : [];
    const off = fs.filter((y) => !on.includes(y));
    const fmt = (l: typeof fs) =>
      l
        .map(
          ({ x }) =>
            `${x.code}:${x.severity}${x.evidence?.log10Nfa !== undefined ? `(${x.evidence.log10Nfa})` : ""}`,
        )
        .join(" ");
    console.log(
      `${r.f.label === "genuine" ? "G" : "T"} ${r.f.id.padEnd(62)} cap=${String(cap).padEnd(13)} ${Math.round(r.ms)}ms  ON[${fmt(on)}]  OFF[${fmt(off)}]`,
    );
  }
  // Summary per tamper kind: caught = at least one finding on the box; per check
  const kinds = [...new Set(rows.filter((r) => r.f.tamper).map((r) => r.f.tamper!))];
  for (const k of kinds) {
    const t = rows.filter((r) => r.f.tamper === k);
    const caught = t.filter((r) =>
      r.results.some((c) => c.findings.some((x) => (x.severity ?? 0) > 0 && hits(pixelBoxOf(x), r.f.box!))),
    );
    const two = t.filter(
      (r) =>
        new Set(
          r.results
            .filter((c) => c.findings.some((x) => (x.severity ?? 0) > 0 && hits(pixelBoxOf(x), r.f.box!)))
            .map((c) => c.checkId),
        ).size >= 2,
    );
    console.log(`${k}: on-box ${caught.length}/${t.length}, two methods on-box ${two.length}/${t.length}`);
  }
  const g = rows.filter((r) => r.f.label === "genuine");
  const gFlag = g.filter((r) => r.results.some((c) => c.findings.some((x) => (x.severity ?? 0) >= 3)));
  console.log(`genuine with any pixel finding ≥3: ${gFlag.length}/${g.length}`);
  const ms = rows.map((r) => r.ms).sort((a, b) => a - b);
  console.log(
    `pixel checks per page: median ${Math.round(ms[Math.floor(ms.length / 2)] ?? 0)} ms, max ${Math.round(ms.at(-1) ?? 0)} ms`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
