import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepInput, StepName } from "../core/detection.js";

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
async function runStep(step: StepName): Promise<Loaded> {
  const log = path.join(dir, `${step}.json`);
  const input: StepInput = {
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
