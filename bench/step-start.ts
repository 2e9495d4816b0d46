/**
 * Step start cost: runs the built `docverify <step> --detection …` process (as a step Pod or a fresh
 * standalone child runs it) on a detection whose document does not exist, so each step loads its code,
 * fails cleanly at its first read and exits. Prints, per step, the median wall time from spawn to exit
 * and the peak RSS over the runs. Asserts nothing.
 *
 *   node --import tsx bench/step-start.ts [repo-root]      (default: this checkout; needs `npm run build`)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PEAK_RSS_HOOK } from "./peak-rss-hook.js";

const RUNS = Number(process.env.BENCH_STEP_START_RUNS ?? 7);
const STEPS = ["prepare", "check", "agent"] as const;

function stepInput(step: (typeof STEPS)[number]) {
  return {
    detection: `det-step-start-${step}`,
    step,
    attempt: 1,
    spec: {
      source: { uploadId: "upl-missing" },
      docType: "bank_statement",
      region: "GB",
      submittedBy: "bench",
      sample: false,
      priority: "interactive",
    },
    ...(step === "prepare"
      ? {}
      : {
          document: {
            filename: "x.pdf",
            contentType: "application/pdf",
            sizeBytes: 10,
            key: "documents/det-step-start/x.pdf",
            sha256: "0".repeat(64),
          },
        }),
  };
}

export function measureStepStart(repo: string): { step: string; ms: number; rssMb: number }[] {
  const bin = path.join(repo, "dist/bin/docverify.js");
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "docverify-step-start-"));
  try {
    return STEPS.map((step) => {
      const times: number[] = [];
      let rss = 0;
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        const r = spawnSync(
          process.execPath,
          ["--import", PEAK_RSS_HOOK, bin, step, "--detection", `det-${i}`],
          {
            encoding: "utf8",
            env: {
              PATH: process.env.PATH,
              DOCVERIFY_DATA_DIR: dataDir,
              DOCVERIFY_LOG_LEVEL: "silent",
              DOCVERIFY_STEP_INPUT: JSON.stringify(stepInput(step)),
            },
          },
        );
        times.push(performance.now() - started);
        const kb = Number(/MAXRSS_KB (\d+)/.exec(r.stderr)?.[1] ?? Number.NaN);
        rss = Math.max(rss, kb / 1024);
        if (r.status !== 0) throw new Error(`${step} exited ${r.status}: ${r.stderr.slice(0, 500)}`);
      }
      times.sort((a, b) => a - b);
      return { step, ms: Math.round(times[Math.floor(times.length / 2)]!), rssMb: Math.round(rss) };
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const repo = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));
  console.log(`step start (${RUNS} runs each, median wall time to exit; peak RSS) — ${repo}`);
  for (const r of measureStepStart(repo))
    console.log(`  ${r.step.padEnd(8)} ${String(r.ms).padStart(6)} ms  ${String(r.rssMb).padStart(5)} MB`);
}
