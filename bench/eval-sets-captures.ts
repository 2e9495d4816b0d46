import path from "node:path";
import { readFile } from "node:fs/promises";
import {
  type CaptureFixture,
  cjpegAvailable,
  capturesSet,
  realworldTamperedSet,
} from "../fixtures/captures/set.js";
import {
  computeMetrics,
  type DocOutcome,
  type EvalItem,
  formatMetrics,
  scoreOf,
  THRESHOLD,
} from "./eval-harness.js";
import type { LoadedSet } from "./eval-sets.js";

/**
 * The scans-and-photos sets of `npm run eval` (issue 21; fixtures/captures/set.ts):
 *   captures                      simulated flatbed scans, scanning-app output, phone photos and messenger
 *                                 re-encodes of generated documents, genuine and tampered in the pixels or
 *                                 before printing; development and held-out parts (other source seeds,
 *                                 disjoint capture parameters, other forger typefaces and save qualities)
 *   realworld-dev-scans-tampered  the 120 real receipts of ../shared/realworld-dev-scans (genuine) and one
 *                                 tampered copy of each; split in halves by a seeded shuffle
 * Each is reported with the development and held-out parts apart, per capture class and per tamper kind
 * (formatCapturesReport); held-out figures are read in aggregate only.
 */

export const CAPTURE_SOURCES_PER_PART = 24;

const PIXEL_CHECK_IDS = [
  "pixels.noise",
  "pixels.glyphs",
  "pixels.amounts",
  "pixels.compression",
  "jpeg.provenance",
];

function toItem(f: CaptureFixture, set: "captures" | "realworld-dev-scans-tampered"): EvalItem {
  return {
    id: f.id,
    set: set as EvalItem["set"],
    label: f.label,
    tamper: f.tamper,
    docType: f.docType,
    region: f.region,
    variant: `${f.part}, ${f.captureClass}${f.container === "pdf" ? " in a PDF" : ""}${f.how ? `, ${f.how}` : ""}`,
    filename: path.basename(f.file),
    contentType: f.contentType,
    family: `${f.part} ${f.captureClass}`,
    originalId: f.originalId,
    exempt: f.exempt,
    arithmetic: f.arithmetic,
    source: f.file,
    make: async () => new Uint8Array(await readFile(f.file)),
  };
}

export async function capturesEvalSet(
  progress?: (line: string) => void,
  size = CAPTURE_SOURCES_PER_PART,
  parts: "both" | "dev" | "heldout" = "both",
): Promise<LoadedSet> {
  if (!cjpegAvailable())
    return { items: [], skipped: "cjpeg (libjpeg-turbo-progs) is missing; run `npm run test:setup`" };
  const started = performance.now();
  const dev = await capturesSet({ part: "dev", size, progress });
  const held = await capturesSet({ part: "heldout", size, progress });
  const failed = [...dev.failed, ...held.failed];
  const kept = [
    ...(parts === "heldout" ? [] : dev.fixtures),
    ...(parts === "dev" ? [] : held.fixtures),
  ];
  return {
    items: kept.map((f) => toItem(f, "captures")),
    note: `cache ${path.dirname(dev.dir)}: ${dev.reused + held.reused} reused, ${dev.generated + held.generated} generated in ${((performance.now() - started) / 1000).toFixed(0)} s${failed.length ? `; ${failed.length} could not be made: ${failed.map((x) => `${x.id} (${x.error})`).join("; ")}` : ""}`,
  };
}

export async function realworldTamperedEvalSet(
  shared: string,
  progress?: (line: string) => void,
): Promise<LoadedSet> {
  const r = await realworldTamperedSet({ shared, progress });
  if (r.skipped) return { items: [], skipped: r.skipped };
  return {
    items: r.fixtures.map((f) => toItem(f, "realworld-dev-scans-tampered")),
    note: `originals read in place; copies in ${r.dir}: ${r.reused} reused, ${r.generated} made${r.failed.length ? `; ${r.failed.length} could not be made: ${r.failed.map((x) => `${x.id} (${x.error})`).join("; ")}` : ""}`,
  };
}

const pct = (a: number, b: number) => (b ? `${a}/${b} (${((100 * a) / b).toFixed(0)} %)` : "-");

/** Pixel checks that flagged a document. */
function pixelFlags(d: DocOutcome): string[] {
  return (d.agentInput?.checks ?? [])
    .filter((c) => PIXEL_CHECK_IDS.includes(c.checkId) && c.outcome === "flag")
    .map((c) => c.checkId);
}

/** Dev and held-out apart: the harness's figures, then per capture class and per kind, and what flagged the genuine. */
export function formatCapturesReport(docs: readonly DocOutcome[]): string {
  const out: string[] = [];
  for (const part of ["dev", "heldout"]) {
    const ds = docs.filter((d) => d.family?.startsWith(`${part} `));
    if (ds.length === 0) continue;
    out.push(formatMetrics(computeMetrics(ds), `-- ${part === "dev" ? "development" : "HELD-OUT"} part`));
    const classes = [...new Set(ds.map((d) => d.family!.slice(part.length + 1)))].sort();
    const rows = classes.map((c) => {
      const of = ds.filter((d) => d.family === `${part} ${c}`);
      const g = of.filter((d) => d.label === "genuine");
      const t = of.filter(
        (d) =>
          d.label === "tampered" &&
          !d.exempt &&
          (d.originalScore === undefined || d.originalScore < THRESHOLD),
      );
      const two = t.filter((d) => pixelFlags(d).length >= 2);
      return `  ${c.padEnd(14)} genuine ≥ ${THRESHOLD}: ${pct(g.filter((d) => scoreOf(d) >= THRESHOLD).length, g.length).padEnd(14)} detected: ${pct(t.filter((d) => scoreOf(d) >= THRESHOLD).length, t.length).padEnd(14)} two pixel checks flag: ${pct(two.length, t.length)}`;
    });
    out.push(`  per capture class (${part}):`, ...rows);
    const kinds = [...new Set(ds.filter((d) => d.tamper).map((d) => d.tamper!))].sort();
    for (const k of kinds) {
      const t = ds.filter(
        (d) => d.tamper === k && (d.originalScore === undefined || d.originalScore < THRESHOLD),
      );
      const any = t.filter((d) => pixelFlags(d).length >= 1);
      const two = t.filter((d) => pixelFlags(d).length >= 2);
      out.push(
        `  ${k.padEnd(18)} detected ${pct(t.filter((d) => scoreOf(d) >= THRESHOLD).length, t.length).padEnd(14)} a pixel check flags ${pct(any.length, t.length).padEnd(14)} two: ${pct(two.length, t.length)}`,
      );
    }
    if (part === "dev") {
      const fp = ds.filter((d) => d.label === "genuine" && scoreOf(d) >= THRESHOLD);
      for (const d of fp)
        out.push(
          `  genuine ≥ ${THRESHOLD}: ${d.id} ${scoreOf(d)}: ${(d.agentInput?.checks ?? [])
            .filter((c) => c.outcome === "flag")
            .map((c) => `${c.checkId}(${c.severity})`)
            .join(", ")}`,
        );
    } else {
      const g = ds.filter((d) => d.label === "genuine");
      const byCheck = new Map<string, number>();
      for (const d of g.filter((x) => scoreOf(x) >= THRESHOLD))
        for (const c of (d.agentInput?.checks ?? []).filter((x) => x.outcome === "flag"))
          byCheck.set(c.checkId, (byCheck.get(c.checkId) ?? 0) + 1);
      out.push(
        `  held-out genuine ≥ ${THRESHOLD}, checks that flagged them (counts only): ${[...byCheck].map(([k, v]) => `${k} ${v}`).join(", ") || "none"}`,
      );
    }
    const pixMs = ds.flatMap((d) =>
      (d.agentInput?.checks ?? [])
        .filter((c) => PIXEL_CHECK_IDS.includes(c.checkId) || c.checkId === "image.capture")
        .map((c) => c.durationMs ?? 0),
    );
    const perDoc = ds.map((d) =>
      Math.max(
        0,
        ...(d.agentInput?.checks ?? [])
          .filter((c) => [...PIXEL_CHECK_IDS, "image.capture"].includes(c.checkId))
          .map((c) => c.durationMs ?? 0),
      ),
    );
    perDoc.sort((a, b) => a - b);
    if (pixMs.length)
      out.push(
        `  slowest pixel check per document (they run in parallel): median ${perDoc[Math.floor(perDoc.length / 2)]} ms, p95 ${perDoc[Math.floor(perDoc.length * 0.95)]} ms`,
      );
  }
  return out.join("\n");
}
