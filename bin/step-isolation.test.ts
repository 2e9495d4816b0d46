import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepInput, StepName } from "../core/detection.js";
import { createLocalWorkloadRunner } from "../platform/local/workload-runner.js";

const root = path.resolve(import.meta.dirname, "..");
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-step-isolation-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Loaded {
  esm: string[];
  cjs: string[];
  native: string[];
  summary: string;
}

/**
 * Runs the real `docverify <step> --detection …` process (with the module-log preload) on a detection
 * whose document does not exist, so the step loads its code, fails cleanly and exits; returns every
 * module the process loaded.
 */
function stepInput(step: StepName): StepInput {
  return {
    detection: `det-isolation-${step}`,
    step,
    attempt: 1,
    spec: {
      source: { uploadId: "upl-missing" },
      docType: "bank_statement",
      region: "GB",
      submittedBy: "client-a",
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
            key: "documents/det-isolation/x.pdf",
            sha256: "0".repeat(64),
          },
        }),
  };
}

async function runStep(step: StepName): Promise<Loaded> {
  const log = path.join(dir, `${step}.json`);
  const input = stepInput(step);
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "./bin/testdata/module-log.mjs",
      "--import",
      "tsx",
      "bin/docverify.ts",
      step,
      "--detection",
      input.detection,
    ],
    {
      cwd: root,
      encoding: "utf8",
      env: {
        ...process.env,
        MODULE_LOG: log,
        DOCVERIFY_DATA_DIR: dir,
        DOCVERIFY_STEP_INPUT: JSON.stringify(input),
        DOCVERIFY_LOG_LEVEL: "silent",
      },
    },
  );
  expect(r.status, r.stderr).toBe(0);
  const loaded = JSON.parse(await readFile(log, "utf8")) as Omit<Loaded, "summary">;
  return { ...loaded, summary: r.stdout.trim().split("\n").at(-1) ?? "" };
}

const all = (l: Loaded) => [...l.esm, ...l.cjs, ...l.native];
const PARSERS = /pdfjs-dist|@napi-rs[/+]canvas|skia|tesseract|pdf-lib|[/]sharp[/]|libvips/;

describe("a step process loads only its own step", () => {
  it("prepare loads no PDF parser, renderer, image library or OCR engine", async () => {
    const loaded = await runStep("prepare");
    expect(loaded.summary).toContain('"upload_not_found"');
    expect(loaded.esm.some((u) => u.includes("/prepare/step.ts"))).toBe(true);
    expect(all(loaded).filter((m) => PARSERS.test(m))).toEqual([]);
    // Of document/ it needs only the dependency-free header test of the content sniffer.
    const ours = loaded.esm.filter((u) => u.startsWith("file://") && !u.includes("node_modules"));
    expect(ours.filter((u) => /\/(checks|agent)\//.test(u))).toEqual([]);
    expect(ours.filter((u) => /\/document\//.test(u)).map((u) => path.basename(u))).toEqual([
      "pdf-header.ts",
    ]);
  });

  it("the check step loads pdfjs (so the probe sees what a step loads), and no second PDF library", async () => {
    const loaded = await runStep("check");
    expect(loaded.summary).toContain('"check_failed"');
    expect(all(loaded).some((m) => m.includes("pdfjs-dist"))).toBe(true);
    // One PDF library besides our own raw parser (document/pdf-raw/): pdf-lib is for fixtures only.
    expect(all(loaded).filter((m) => m.includes("pdf-lib"))).toEqual([]);
    expect(loaded.esm.some((u) => u.includes("/prepare/"))).toBe(false);
  });

  it("the agent step loads neither the PDF parser nor the prepare step", async () => {
    const loaded = await runStep("agent");
    expect(all(loaded).filter((m) => PARSERS.test(m))).toEqual([]);
    expect(loaded.esm.some((u) => /\/(prepare|checks|document)\//.test(u))).toBe(false);
  });
});

describe("standalone warm workers: the prepare step never shares a process with check or agent", () => {
  it("after a check ran in a warm worker, the prepare runs in a worker that loaded no parser and no check or agent code", async () => {
    const pidDir = path.join(dir, "workers");
    const runner = createLocalWorkloadRunner({
      command: process.execPath,
      args: [
        "--import",
        path.join(root, "bin/testdata/module-log.mjs"),
        "--import",
        "tsx",
        path.join(root, "bin/docverify.ts"),
      ],
      workers: 1,
      baseEnv: {
        ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >),
        MODULE_LOG: path.join(dir, "worker-{pid}.json"),
        MODULE_LOG_SIGNAL: "SIGUSR2",
        DOCVERIFY_DATA_DIR: dir,
        DOCVERIFY_LOG_LEVEL: "silent",
      },
      log: pino({ level: "silent" }),
      pidDir,
    });
    const changed: string[] = [];
    const waiters: (() => void)[] = [];
    runner.onChange((owner) => {
      changed.push(owner);
      for (const w of waiters.splice(0)) w();
    });
    /** Runs one step on the pool and waits for its end (the runner's notification, not a deadline). */
    const run = async (step: StepName) => {
      const input = stepInput(step);
      const name = `${input.detection}-${step}-1`;
      await runner.start({
        name,
        step,
        owner: { name: input.detection },
        env: { DOCVERIFY_STEP_INPUT: JSON.stringify(input), DOCVERIFY_DETECTION: input.detection },
        timeoutSeconds: 600,
      });
      for (;;) {
        const s = await runner.get(name);
        if (s?.state === "Succeeded" || s?.state === "Failed") return s;
        await new Promise<void>((r) => waiters.push(r));
      }
    };
    try {
      // The check first, so a shared worker would have pdfjs, the canvas and the OCR engine loaded.
      expect((await run("check")).message).toContain('"check_failed"');
      expect((await run("prepare")).message).toContain('"upload_not_found"');
      expect((await run("agent")).state).toBe("Succeeded");
      const pids = (await readdir(pidDir)).map((f) => Number(f.replace(/\.pid$/, "")));
      expect(pids).toHaveLength(3);
      for (const pid of pids) process.kill(pid, "SIGUSR2");
      const logs: Loaded[] = [];
      for (const pid of pids) {
        const file = path.join(dir, `worker-${pid}.json`);
        for (;;) {
          try {
            logs.push({
              ...(JSON.parse(await readFile(file, "utf8")) as Omit<Loaded, "summary">),
              summary: "",
            });
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 50)); // the worker writes it on the signal
          }
        }
      }
      const ran = (l: Loaded, step: string) => l.esm.some((u) => u.includes(`/${step}/step.ts`));
      const prepare = logs.filter((l) => ran(l, "prepare"));
      const check = logs.filter((l) => ran(l, "checks"));
      expect(prepare).toHaveLength(1);
      expect(check).toHaveLength(1);
      expect(all(prepare[0]!).filter((m) => PARSERS.test(m))).toEqual([]);
      expect(prepare[0]!.esm.filter((u) => /\/(checks|agent)\//.test(u))).toEqual([]);
      expect(all(check[0]!).some((m) => m.includes("pdfjs-dist"))).toBe(true);
      expect(ran(check[0]!, "prepare")).toBe(false);
    } finally {
      await runner.close();
    }
  });
});
