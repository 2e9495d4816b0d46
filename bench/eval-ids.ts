/**
 * `npm run eval:ids`: how well the identity reading works on the `ids` fixtures, without the rest of the
 * pipeline: the MRZ read exactly (every character of every line equal to the truth) per capture kind, the
 * barcode decoded exactly, and what id.mrz / id.barcode flag on genuine and tampered documents (a finding of
 * severity ≥ 8 counts as flagged: what alone takes a document to 50). The full pipeline's figures (score,
 * FPR at 50, detection per tamper kind) come from `npm run eval -- --set ids`.
 *
 *   npm run eval:ids                      both parts (dev, then held-out)
 *   npm run eval:ids -- --part held-out   one part
 *   npm run eval:ids -- --small           2 genuine per kind, 2 tampered per tamper kind
 *   npm run eval:ids -- --verbose         every document
 *   npm run eval:ids -- --part dev --kind mrz_composite_stale   one tamper kind only (`genuine`: genuine ones)
 *   npm run eval:ids -- --part dev --draw 1 --genuine 12   other development documents (draw 1: other seeds,
 *                                         12 genuine per kind); --tampered N sets the tampered copies per kind
 */
import { idBarcodeCheck } from "../checks/id-barcode/id-barcode.js";
import { idMrzCheck } from "../checks/id-mrz/id-mrz.js";
import type { CheckResult } from "../core/check-result.js";
import { createIdOcr } from "../document/id/id-ocr.js";
import { readIdentity } from "../document/id/read.js";
import type { DocumentModel } from "../document/model.js";
import { buildDocumentModel } from "../document/pdf-model.js";
import { type IdFixture, type IdPart, idPlan } from "../fixtures/ids/plan.js";

interface Row {
  f: IdFixture;
  mrzExact?: boolean;
  barcodeExact?: boolean;
  flagged: boolean;
  /** Codes of the findings at severity ≥ 8 (each alone takes a document to 50). */
  strongCodes: string[];
  codes: string[];
  ms: number;
}

const NOW = new Date("2026-06-01T00:00:00Z");

async function modelOf(bytes: Uint8Array, contentType: string): Promise<DocumentModel> {
  return buildDocumentModel({
    bytes,
    contentType,
    filename: null,
    declaredContentType: null,
    declaredDocType: "id_document",
    region: "EU",
  });
}

interface PlanOptions {
  genuinePerKind?: number;
  tamperedPerKind?: number;
  draw?: number;
}

async function run(part: IdPart, opts: PlanOptions, verbose: boolean, kind?: string): Promise<Row[]> {
  const plan = idPlan(part, opts).filter(
    (f) => kind === undefined || (kind === "genuine" ? f.label === "genuine" : f.tamper === kind),
  );
  if (plan.length === 0) throw new Error(`no ${part} fixture of kind ${kind}`);
  const ocr = await createIdOcr();
  const rows: Row[] = [];
  try {
    for (const f of plan) {
      const { bytes, contentType } = await f.make();
      const doc = await modelOf(bytes, contentType);
      const started = performance.now();
      // readIdentity caches the reading on the document model: the checks below reuse it.
      const reading = await readIdentity(doc, { now: NOW, ocr });
      const ms = Math.round(performance.now() - started);
      const truth = f.truth();
      const page = reading.pages.find((p) => p.mrz) ?? reading.pages[0];
      const row: Row = { f, flagged: false, strongCodes: [], codes: [], ms };
      if (truth.mrz) row.mrzExact = page?.mrz?.reading.lines.join("\n") === truth.mrz.join("\n");
      if (truth.barcode)
        row.barcodeExact = reading.pages.some((p) => p.barcodes.some((b) => b.text === truth.barcode));
      const results: CheckResult[] = [];
      for (const check of [idMrzCheck, idBarcodeCheck]) results.push(await check.run(doc, { now: NOW }));
      const strong = results.flatMap((r) =>
        r.findings.filter((x) => (x.severity ?? 0) >= 8).map((x) => x.code),
      );
      row.flagged = strong.length > 0;
      row.strongCodes = [...new Set(strong)];
      row.codes = [
        ...new Set(
          results.flatMap((r) =>
            r.findings.filter((x) => (x.severity ?? 0) >= 2).map((x) => `${x.code}:${x.severity}`),
          ),
        ),
      ];
      rows.push(row);
      if (verbose)
        process.stderr.write(
          `${f.id}: mrz ${row.mrzExact ?? "-"} barcode ${row.barcodeExact ?? "-"} flagged ${row.flagged} [${row.codes.join(" ")}] ${ms} ms${
            row.mrzExact === false
              ? `\n   read  ${page?.mrz?.reading.lines.join(" / ") ?? "(no MRZ found)"}\n   truth ${truth.mrz?.join(" / ")}`
              : ""
          }\n`,
        );
      if (verbose)
        for (const p of reading.pages) {
          for (const d of [...p.mrzVsViz, ...p.barcodeVsViz])
            process.stderr.write(
              `   vs ${d.field}: encoded “${d.encoded}” printed “${d.printed}” again “${d.reread}” conf ${Math.round(d.viz.confidence)} ${d.viz.label} [${d.doubts.join(",")}]\n`,
            );
          for (const u of p.unconfirmed) process.stderr.write(`   unconfirmed ${u}\n`);
        }
    }
  } finally {
    await ocr.terminate();
  }
  return rows;
}

const pct = (a: number, n: number) => (n === 0 ? "–" : `${((100 * a) / n).toFixed(1)} % (${a}/${n})`);

function report(part: IdPart, rows: Row[]): string {
  const lines = [`== ids ${part}: ${rows.length} documents`];
  for (const cap of ["scan", "photo"] as const) {
    const r = rows.filter((x) => x.f.capture === cap && x.mrzExact !== undefined);
    lines.push(`MRZ read exactly, ${cap}s: ${pct(r.filter((x) => x.mrzExact).length, r.length)}`);
  }
  const b = rows.filter((x) => x.barcodeExact !== undefined);
  lines.push(`PDF417 decoded exactly: ${pct(b.filter((x) => x.barcodeExact).length, b.length)}`);
  const genuine = rows.filter((x) => x.f.label === "genuine");
  lines.push(
    `genuine flagged at severity ≥ 8 (alone ≥ 50): ${pct(genuine.filter((x) => x.flagged).length, genuine.length)}`,
  );
  const flaggedGenuine = new Set(genuine.filter((x) => x.flagged).map((x) => x.f.id));
  const kinds = [...new Set(rows.filter((x) => x.f.tamper).map((x) => x.f.tamper!))];
  for (const k of kinds) {
    const t = rows.filter((x) => x.f.tamper === k && !flaggedGenuine.has(x.f.originalId ?? ""));
    lines.push(`detected, ${k}: ${pct(t.filter((x) => x.flagged).length, t.length)}`);
  }
  // Aggregate only (safe for the held-out part): which codes flag genuine documents, and which codes
  // detected each tamper kind. A document counts once per code.
  const byCode = (rs: Row[]) => {
    const n = new Map<string, number>();
    for (const r of rs) for (const c of r.strongCodes) n.set(c, (n.get(c) ?? 0) + 1);
    return [...n].sort((a, c) => c[1] - a[1] || a[0].localeCompare(c[0])).map(([c, k]) => `${c} ${k}`);
  };
  lines.push(`codes flagging genuine documents at ≥ 8: ${byCode(genuine).join(", ") || "none"}`);
  for (const k of kinds) {
    const t = rows.filter((x) => x.f.tamper === k && !flaggedGenuine.has(x.f.originalId ?? ""));
    lines.push(`codes detecting ${k} at ≥ 8: ${byCode(t).join(", ") || "none"}`);
  }
  const ms = rows.map((x) => x.ms).sort((a, c) => a - c);
  lines.push(
    `reading time per document: median ${ms[Math.floor(ms.length / 2)]} ms, max ${ms[ms.length - 1]} ms`,
  );
  return lines.join("\n");
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const parts: IdPart[] = argv.includes("--part")
    ? [argv[argv.indexOf("--part") + 1] as IdPart]
    : ["dev", "held-out"];
  const kind = argv.includes("--kind") ? argv[argv.indexOf("--kind") + 1] : undefined;
  const num = (flag: string) => (argv.includes(flag) ? Number(argv[argv.indexOf(flag) + 1]) : undefined);
  const opts: PlanOptions = argv.includes("--small") ? { genuinePerKind: 2, tamperedPerKind: 2 } : {};
  const genuine = num("--genuine");
  const tampered = num("--tampered");
  const draw = num("--draw");
  if (genuine !== undefined) opts.genuinePerKind = genuine;
  if (tampered !== undefined) opts.tamperedPerKind = tampered;
  if (draw !== undefined) {
    if (parts.includes("held-out") && draw !== 0) throw new Error("--draw is for the dev part only");
    opts.draw = draw;
  }
  const out: string[] = [];
  for (const part of parts) out.push(report(part, await run(part, opts, argv.includes("--verbose"), kind)));
  process.stdout.write(`${out.join("\n\n")}\n`);
}

await main();
