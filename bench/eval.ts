/**
 * `npm run eval`: the quality figures of the checks and the agent, per labelled set, printed as tables;
 * asserts nothing. Each set is reported on its own (bench/eval-sets.ts, bench/eval-report.ts):
 *   synthetic       the repo's seeded corpus (fixtures/corpus.ts)
 *   realworld-dev   68 genuine PDFs from ../shared/realworld-dev (manifest.json)
 *   real-producer   documents made by LibreOffice, Chromium and Ghostscript, tampered with MuPDF, qpdf,
 *                   LibreOffice Draw and Ghostscript (fixtures/real-producer/; generated once, then cached)
 *   debian-manuals  PDF manuals Debian ships (libtasn1-doc, shared-mime-info)
 *   layouts-dev     generated layouts (fixtures/layouts/): development seeds on the development producers
 *   layouts-heldout generated layouts: held-out seeds on every producer, two producers never used in
 *                   development — reported ONLY in aggregate (no document is named, printed or written)
 *   layouts-devdraw a development draw (`--dev-draw N`, default 40): the held-out plan of draw N on the
 *                   development producers only (wkhtmltopdf and TCPDF stay unseen), fresh layouts that may be
 *                   opened and debugged; reported like layouts-dev. Draws 1-39 are reserved for held-out
 *                   measurement (layouts-heldout) and refused.
 *   realworld-dev-scans  120 genuine scanned receipts from ../shared/realworld-dev-scans (OCR; ~10 min)
 *   captures        simulated scans and photos, genuine and tampered in the pixels (development and held-out
 *                   parts reported apart; bench/eval-sets-captures.ts)
 *   realworld-dev-scans-tampered  ../shared/realworld-dev-scans and a tampered copy of each receipt
 *   ids             generated passports, ID cards and US licences as scans and photos (fixtures/ids/;
 *                   `--ids-part dev` for the part the id checks were developed on, default held-out)
 *
 *   npm run eval                                   every set, rules engine, synthetic held-out seed 9001
 *   npm run eval -- --set realworld-dev            one set (repeat --set, or comma-separate, for several)
 *   npm run eval -- --real-producer-subset test    the small real-producer subset the unit tests use
 *   npm run eval -- --real-producer-draw 2         another draw of the real-producer plan (other seeds:
 *                                                  documents the checks were not developed with)
 *   npm run eval -- --set layouts-dev,layouts-heldout   the generated layouts (generated once, then cached)
 *   npm run eval -- --layouts-draw 2               a fresh held-out draw (new seeds nobody has seen)
 *   npm run eval -- --set layouts-devdraw --dev-draw 41   another development draw (N ≥ 40; 1-39 are held out)
 *   npm run eval -- --limit 40                     the first 40 genuine documents per layouts set (round-robin
 *                                                  over producers) and their tampered copies
 *   npm run eval -- --layouts-subset test          the small layouts subset the unit tests use
 *   npm run eval -- --set captures --captures-size 8   fewer source documents per part (default 24)
 *   npm run eval -- --set captures --captures-part dev  only the development part (while developing)
 *   npm run eval -- --shared /path/to/shared       where realworld-dev lives (default ../shared beside the clone)
 *   npm run eval -- --seed 1001                    the synthetic calibration set
 *   npm run eval -- --genuine 1 --tampered 2       a smaller synthetic set (per cell / per kind)
 *   npm run eval -- --no-images                    synthetic without image documents (no OCR; much faster)
 *   npm run eval -- --engine llm --llm-url http://127.0.0.1:8199/v1 [--llm-model NAME]
 *   npm run eval -- --json out.json                also write every document's outcome as JSON
 *   npm run eval -- --verbose                      progress per document, every false positive and miss
 *   npm run eval -- --memory                       each set through one tenant memory in the set's order
 *                                                  (issue 23; each document remembered once scored), and
 *                                                  per set the history.* codes that fired (counts only)
 *
 * Per set: ROC AUC (and, where a set has exempt kinds, the AUC without their copies), precision/recall/F1
 * and the false-positive rate at score 50, detection per tamper kind (only tampered copies of originals that
 * score below 50 count), the genuine score distribution and the
 * false positives with what flagged them, FPR per producer family, detection by whether the edit kept the
 * arithmetic, and the table check/code → documents (genuine vs tampered). Then the per-check false-positive
 * budget on all real genuine documents, and the check step's time on a 10-page statement.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  AGGREGATE_ONLY_SETS,
  type DocOutcome,
  EVAL_SETS,
  type EvalSet,
  evaluate,
  linkOriginals,
  misclassified,
} from "./eval-harness.js";
import { formatHeldout, formatLayoutsDevExtras } from "./eval-layouts.js";
import { budgetLines, formatBudget, formatSet } from "./eval-report.js";
import {
  debianManualsSet,
  layoutsDevDrawEvalSet,
  layoutsEvalSet,
  idsEvalSet,
  type LoadedSet,
  REPO_ROOT,
  realProducerEvalSet,
  realworldDevScansSet,
  realworldDevSet,
  SHARED_DIR,
  syntheticSet,
} from "./eval-sets.js";
import {
  CAPTURE_SOURCES_PER_PART,
  capturesEvalSet,
  formatCapturesReport,
  realworldTamperedEvalSet,
} from "./eval-sets-captures.js";
import { FIRST_DEV_DRAW } from "./layouts-devdraw.js";
import { tenPageCheckStepMs } from "./ten-page.js";

export const HOLDOUT_SEED = 9001;
export const CALIBRATION_SEED = 1001;

interface Args {
  seed: number;
  genuine: number;
  tampered: number;
  images: boolean;
  engine: "rules" | "llm";
  llmUrl?: string;
  llmModel?: string;
  json?: string;
  verbose: boolean;
  sets: EvalSet[];
  realProducerSubset: "full" | "test";
  realProducerDraw: number;
  layoutsDraw: number;
  devDraw: number;
  layoutsSubset: "full" | "test";
  limit?: number;
  shared: string;
  capturesSize: number;
  /** Which parts of the captures set to score (`--captures-part dev` while developing). */
  capturesPart: "both" | "dev" | "heldout";
  idsPart: "dev" | "held-out";
  memory: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    seed: HOLDOUT_SEED,
    genuine: 3,
    tampered: 6,
    images: true,
    engine: "rules",
    verbose: false,
    sets: [],
    realProducerSubset: "full",
    realProducerDraw: 1,
    layoutsDraw: 1,
    devDraw: FIRST_DEV_DRAW,
    layoutsSubset: "full",
    shared: SHARED_DIR,
    capturesSize: CAPTURE_SOURCES_PER_PART,
    capturesPart: "both",
    idsPart: "held-out",
    memory: false,
  };
  const value = (i: number, name: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${name} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case "--seed":
        args.seed = Number(value(i++, a));
        break;
      case "--genuine":
        args.genuine = Number(value(i++, a));
        break;
      case "--tampered":
        args.tampered = Number(value(i++, a));
        break;
      case "--no-images":
        args.images = false;
        break;
      case "--engine": {
        const e = value(i++, a);
        if (e !== "rules" && e !== "llm") throw new Error(`--engine must be rules or llm, not ${e}`);
        args.engine = e;
        break;
      }
      case "--llm-url":
        args.llmUrl = value(i++, a);
        break;
      case "--llm-model":
        args.llmModel = value(i++, a);
        break;
      case "--json":
        args.json = value(i++, a);
        break;
      case "--verbose":
        args.verbose = true;
        break;
      case "--memory":
        args.memory = true;
        break;
      case "--set":
        for (const name of value(i++, a).split(",")) {
          if (name === "all") args.sets.push(...EVAL_SETS);
          else if ((EVAL_SETS as readonly string[]).includes(name)) args.sets.push(name as EvalSet);
          else throw new Error(`--set must be one of ${EVAL_SETS.join(", ")} or all, not ${name}`);
        }
        break;
      case "--real-producer-subset": {
        const v = value(i++, a);
        if (v !== "full" && v !== "test")
          throw new Error(`--real-producer-subset must be full or test, not ${v}`);
        args.realProducerSubset = v;
        break;
      }
      case "--real-producer-draw":
        args.realProducerDraw = Number(value(i++, a));
        if (!Number.isInteger(args.realProducerDraw) || args.realProducerDraw < 1)
          throw new Error(`--real-producer-draw must be a whole number from 1, got ${argv[i]}`);
        break;
      case "--layouts-draw":
        args.layoutsDraw = Number(value(i++, a));
        if (!Number.isInteger(args.layoutsDraw) || args.layoutsDraw < 1)
          throw new Error(`--layouts-draw must be a whole number from 1, got ${argv[i]}`);
        break;
      case "--dev-draw":
        args.devDraw = Number(value(i++, a));
        if (!Number.isInteger(args.devDraw) || args.devDraw < FIRST_DEV_DRAW)
          throw new Error(
            `--dev-draw must be a whole number from ${FIRST_DEV_DRAW}, got ${argv[i]}: draws 1-${FIRST_DEV_DRAW - 1} are reserved for held-out measurement`,
          );
        break;
      case "--layouts-subset": {
        const v = value(i++, a);
        if (v !== "full" && v !== "test") throw new Error(`--layouts-subset must be full or test, not ${v}`);
        args.layoutsSubset = v;
        break;
      }
      case "--limit":
        args.limit = Number(value(i++, a));
        if (!Number.isInteger(args.limit) || args.limit < 1)
          throw new Error(`--limit must be a whole number from 1, got ${argv[i]}`);
        break;
      case "--captures-size":
        args.capturesSize = Number(value(i++, a));
        break;
      case "--captures-part": {
        const v = value(i++, a);
        if (v !== "dev" && v !== "heldout" && v !== "both")
          throw new Error(`--captures-part must be dev, heldout or both, not ${v}`);
        args.capturesPart = v;
        break;
      }
      case "--ids-part": {
        const v = value(i++, a);
        if (v !== "dev" && v !== "held-out") throw new Error(`--ids-part must be dev or held-out, not ${v}`);
        args.idsPart = v;
        break;
      }
      case "--shared":
        args.shared = path.resolve(value(i++, a));
        break;
      default:
        throw new Error(`unknown argument ${a}; see the comment at the top of bench/eval.ts`);
    }
  }
  for (const [k, v] of [
    ["--seed", args.seed],
    ["--genuine", args.genuine],
    ["--tampered", args.tampered],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`${k} must be a whole number, got ${v}`);
  }
  if (args.engine === "llm" && !args.llmUrl)
    throw new Error("--engine llm needs --llm-url (an OpenAI-compatible base URL)");
  return args;
}

async function load(set: EvalSet, args: Args, progress: (l: string) => void): Promise<LoadedSet> {
  switch (set) {
    case "synthetic":
      return syntheticSet({
        seed: args.seed,
        genuine: args.genuine,
        tampered: args.tampered,
        images: args.images,
      });
    case "realworld-dev":
      return realworldDevSet(args.shared);
    case "real-producer":
      return realProducerEvalSet(
        args.realProducerSubset,
        args.verbose ? progress : undefined,
        args.realProducerDraw,
      );
    case "debian-manuals":
      return debianManualsSet();
    case "layouts-dev":
      return layoutsEvalSet("dev", { limit: args.limit, subset: args.layoutsSubset, progress });
    case "layouts-heldout":
      if (args.layoutsSubset === "test")
        return { items: [], skipped: "the test subset has no held-out documents" };
      return layoutsEvalSet("heldout", { draw: args.layoutsDraw, limit: args.limit, progress });
    case "layouts-devdraw":
      if (args.layoutsSubset === "test")
        return { items: [], skipped: "the test subset has no development draw" };
      return layoutsDevDrawEvalSet({ draw: args.devDraw, limit: args.limit, progress });
    case "realworld-dev-scans":
      return realworldDevScansSet(args.shared);
    case "captures":
      return capturesEvalSet(args.verbose ? progress : undefined, args.capturesSize, args.capturesPart);
    case "realworld-dev-scans-tampered":
      return realworldTamperedEvalSet(args.shared, args.verbose ? progress : undefined);
    case "ids":
      return idsEvalSet(args.idsPart);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const sets = args.sets.length ? [...new Set(args.sets)] : [...EVAL_SETS];
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  process.stderr.write(
    `eval: sets ${sets.join(", ")}; engine ${args.engine}; synthetic seed ${args.seed}; ${os.cpus().length} CPUs, Node ${process.version}; repo ${REPO_ROOT}\n`,
  );
  const all: DocOutcome[] = [];
  const reports: string[] = [];
  for (const set of sets) {
    const started = performance.now();
    const loaded = await load(set, args, progress);
    if (loaded.items.length === 0) {
      reports.push(`== set ${set}: SKIPPED — ${loaded.skipped ?? "no documents"}`);
      continue;
    }
    process.stderr.write(
      `eval: ${set}: ${loaded.items.length} documents${loaded.note ? ` (${loaded.note})` : ""}\n`,
    );
    const aggregateOnly = AGGREGATE_ONLY_SETS.includes(set);
    // Held-out documents are counted, never named.
    let scored = 0;
    const counter = (_line: string) => {
      scored++;
      if (scored % 25 === 0 || scored === loaded.items.length)
        progress(`eval: ${set}: ${scored}/${loaded.items.length} scored`);
    };
    const docs = linkOriginals(
      await evaluate(loaded.items, {
        engine: args.engine,
        llmUrl: args.llmUrl,
        llmModel: args.llmModel,
        memory: args.memory,
        progress: aggregateOnly
          ? counter
          : args.verbose
            ? progress
            : set.startsWith("layouts")
              ? counter
              : undefined,
      }),
    );
    all.push(...docs);
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    const note = [loaded.note, loaded.skipped, `${secs} s`].filter(Boolean).join("; ");
    const report = aggregateOnly
      ? formatHeldout(docs, note)
      : [
          formatSet(set, docs, { verbose: args.verbose, note }),
          ...(set === "layouts-dev" || set === "layouts-devdraw" ? [formatLayoutsDevExtras(docs)] : []),
          ...(set === "captures" || set === "realworld-dev-scans-tampered"
            ? [formatCapturesReport(docs)]
            : []),
        ].join("\n");
    reports.push(report);
    if (args.memory) process.stdout.write(`${formatMemory(set, docs)}\n`);
    const wrong = args.verbose && !aggregateOnly ? misclassified(docs) : [];
    process.stdout.write(`${[report, ...wrong].join("\n")}\n\n`);
  }
  const budget = formatBudget(budgetLines(all));
  process.stdout.write(`${budget}\n`);
  for (const r of reports.filter((x) => x.includes("SKIPPED"))) process.stdout.write(`${r}\n`);
  if (sets.includes("synthetic")) {
    process.stdout.write(
      `check step on a 10-page bank statement: ${await tenPageCheckStepMs()} ms (median of 5)\n`,
    );
  }
  if (args.json) {
    await writeFile(
      args.json,
      JSON.stringify(
        {
          seed: args.seed,
          engine: args.engine,
          sets,
          // Held-out captures are read in aggregate only: never written out.
          docs: all.filter(
            (d) =>
              (!d.set || !AGGREGATE_ONLY_SETS.includes(d.set)) && !d.family?.startsWith("heldout "),
          ),
        },
        null,
        1,
      ),
    );
    process.stderr.write(`wrote ${args.json} (without the aggregate-only sets' documents)\n`);
  }
}

/**
 * What the tenant memory added to a set (--memory), counts only (held-out sets too: no document is named):
 * history.* codes per label with their highest severity, and the genuine documents at 50 or above that carry
 * a history finding.
 */
function formatMemory(set: string, docs: readonly DocOutcome[]): string {
  const codes = new Map<string, { genuine: number; tampered: number; top: number }>();
  let genuineWithHistory = 0;
  let flaggedWithHistory = 0;
  for (const d of docs) {
    const history = (d.agentInput?.checks ?? [])
      .filter((c) => c.checkId === "history.matches")
      .flatMap((c) => c.findings);
    for (const f of history) {
      const c = codes.get(f.code) ?? { genuine: 0, tampered: 0, top: 0 };
      if (d.label === "genuine") c.genuine++;
      else c.tampered++;
      c.top = Math.max(c.top, f.severity ?? 0);
      codes.set(f.code, c);
    }
    if (d.label === "genuine" && history.length) {
      genuineWithHistory++;
      if ((d.score ?? 0) >= 50) flaggedWithHistory++;
    }
  }
  const list = [...codes]
    .map(([code, c]) => `${code} (genuine ${c.genuine}, tampered ${c.tampered}, max severity ${c.top})`)
    .join("; ");
  return `memory (${set}): history.* findings: ${list || "none"}; genuine documents with one: ${genuineWithHistory}, of which at 50 or above: ${flaggedWithHistory}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`eval failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
