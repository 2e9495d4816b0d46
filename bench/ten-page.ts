import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { runCheckStep } from "../checks/step.js";
import { loadConfig } from "../core/config.js";
import { keys, type StepInput } from "../core/detection.js";
import { systemClock } from "../core/ports.js";
import { makeDocument } from "../fixtures/documents.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";

/**
 * The check step's wall time on a generated 10-page bank statement (the issue's ≤ 500 ms target), run
 * in-process on a local object store: one warm-up, then the median of `runs`.
 */
export async function tenPageCheckStepMs(runs = 5): Promise<number> {
  const root = await mkdtemp(path.join(os.tmpdir(), "docverify-10p-"));
  try {
    const config = loadConfig({ DOCVERIFY_DATA_DIR: root });
    const objects = createLocalObjectStore(path.join(root, "objects"));
    await objects.ensureBucket(config.bucket);
    const ctx = {
      objects,
      bucket: config.bucket,
      config,
      log: pino({ level: "silent" }),
      clock: systemClock,
    };
    const bytes = await makeDocument({ seed: 10, docType: "bank_statement", region: "GB", pages: 10 });
    const detection = "det-bench-ten-page";
    const key = keys.document(detection, "statement.pdf");
    await objects.put(config.bucket, key, Buffer.from(bytes), { contentType: "application/pdf" });
    const input: StepInput = {
      detection,
      step: "check",
      attempt: 1,
      spec: {
        source: { url: "https://example.com/statement.pdf" },
        docType: "bank_statement",
        region: "GB",
        submittedBy: "bench",
        sample: false,
        priority: "interactive",
      },
      document: {
        filename: "statement.pdf",
        contentType: "application/pdf",
        sizeBytes: bytes.length,
        key,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      },
    };
    await runCheckStep(input, ctx);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await runCheckStep(input, ctx);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return Math.round(times[Math.floor(times.length / 2)] as number);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
