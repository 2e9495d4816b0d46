/**
 * `npm run eval`: the quality figures of the checks and the agent on the repo's labelled set
 * (fixtures/corpus.ts), printed as a table; asserts nothing.
 *
 *   npm run eval                                   rules engine, the held-out set (seed 9001)
 *   npm run eval -- --seed 1001                    the calibration set
 *   npm run eval -- --genuine 1 --tampered 2       a smaller set (per cell / per kind)
 *   npm run eval -- --no-images                    without image documents (no OCR; much faster)
 *   npm run eval -- --engine llm --llm-url http://127.0.0.1:8199/v1 [--llm-model NAME]
 *   npm run eval -- --json out.json                also write every document's outcome as JSON
 *   npm run eval -- --verbose                      a progress line per document and the misclassified list
 *
 * The figures: ROC AUC of the score, precision/recall/F1 and the false-positive rate at score 50,
 * detection rate per tamper kind, doc-type accuracy of the classifier, time per document, and the check
 * step's time on a 10-page statement (median of 5 runs).
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { corpusPlan } from "../fixtures/corpus.js";
import { computeMetrics, evaluate, formatMetrics, misclassified } from "./eval-harness.js";
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
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    seed: HOLDOUT_SEED,
    genuine: 3,
    tampered: 6,
    images: true,
    engine: "rules",
    verbose: false,
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

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const items = corpusPlan({
    seed: args.seed,
    genuinePerCell: args.genuine,
    tamperedPerKind: args.tampered,
    images: args.images,
  });
  process.stderr.write(
    `eval: ${items.length} documents (seed ${args.seed}), engine ${args.engine}, ${os.cpus().length} CPUs, Node ${process.version}\n`,
  );
  const docs = await evaluate(items, {
    engine: args.engine,
    llmUrl: args.llmUrl,
    llmModel: args.llmModel,
    progress: args.verbose ? (line) => process.stderr.write(`${line}\n`) : undefined,
  });
  const metrics = computeMetrics(docs);
  const tenPage = await tenPageCheckStepMs();
  process.stdout.write(
    `${formatMetrics(metrics, `docverify eval: seed ${args.seed}, engine ${args.engine}`)}\ncheck step on a 10-page bank statement: ${tenPage} ms (median of 5)\n`,
  );
  if (args.verbose) for (const line of misclassified(docs)) process.stdout.write(`${line}\n`);
  if (args.json) {
    await writeFile(
      args.json,
      JSON.stringify({ seed: args.seed, engine: args.engine, metrics, docs }, null, 1),
    );
    process.stderr.write(`wrote ${args.json}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`eval failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
