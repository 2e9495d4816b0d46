/**
 * Status size: runs the real check and agent steps on a document (in-process, on a local object store),
 * builds the Detection's status with the reconciler's own transitions, and prints the size of the resource
 * as the store would write it. Asserts nothing.
 *
 *   node --import tsx bench/status-size.ts <file.pdf> [...]
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { loadConfig } from "../core/config.js";
import {
  type AgentStepResult,
  type CheckStepResult,
  type Detection,
  DETECTION_KIND,
  type DetectionStatus,
  keys,
  type StepInput,
} from "../core/detection.js";
import { systemClock } from "../core/ports.js";
import { API_GROUP_VERSION } from "../core/resource.js";
import { attemptStarted, attemptSucceeded, running } from "../operator/detection-status.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { writeStepResult } from "../core/step-results.js";

const settings = { stepMaxAttempts: 3, retentionSeconds: 30 * 86400 };

export async function measureStatusSize(
  file: string,
): Promise<{ bytes: number; ms: number; checks: number; findings: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-status-size-"));
  try {
    const objects = createLocalObjectStore(path.join(dir, "objects"));
    const config = loadConfig({ DOCVERIFY_DATA_DIR: dir, DOCVERIFY_LOG_LEVEL: "silent" });
    await objects.ensureBucket(config.bucket);
    const bytes = await readFile(file);
    const name = "det-01k0000000000000000000status";
    const document = {
      filename: path.basename(file),
      contentType: "application/pdf",
      sizeBytes: bytes.length,
      key: keys.document(name, path.basename(file)),
      sha256: createHash("sha256").update(bytes).digest("hex"),
    };
    await objects.put(config.bucket, document.key, bytes);
    const ctx = {
      objects,
      bucket: config.bucket,
      config,
      log: pino({ level: "silent" }),
      clock: systemClock,
    };
    const spec = {
      source: { url: "https://example.com/doc.pdf" },
      docType: "other" as const,
      region: "US",
      submittedBy: "bench",
      sample: false,
      priority: "interactive" as const,
    };
    const d: Detection = {
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: {
        name,
        uid: "00000000-0000-0000-0000-000000000000",
        creationTimestamp: new Date().toISOString(),
        labels: { "docverify.io/client": "bench" },
        finalizers: ["docverify.io/cleanup"],
        resourceVersion: "1",
        generation: 1,
      },
      spec,
    };
    const started = performance.now();
    let status: DetectionStatus = running({}, d, new Date());
    status = attemptStarted(status, "prepare", 1, `${name}-prepare-1`, new Date()).status;
    status = attemptSucceeded(status, { step: "prepare", document }, new Date(), settings).status;
    const input = (step: "check" | "agent"): StepInput => ({
      detection: name,
      step,
      attempt: 1,
      spec,
      document,
    });
    const { runCheckStep } = await import("../checks/step.js");
    const check: CheckStepResult = await runCheckStep(input("check"), ctx);
    await writeStepResult(objects, config.bucket, name, check);
    status = attemptStarted(status, "check", 1, `${name}-check-1`, new Date()).status;
    status = attemptSucceeded(status, check, new Date(), settings).status;
    if (status.phase !== "Completed" && status.phase !== "Failed") {
      const { runAgentStep } = await import("../agent/step.js");
      const agent: AgentStepResult = await runAgentStep(input("agent"), ctx);
      status = attemptStarted(status, "agent", 1, `${name}-agent-1`, new Date()).status;
      status = attemptSucceeded(status, agent, new Date(), settings).status;
    }
    const ms = performance.now() - started;
    const resource = { ...d, status };
    if (process.env.STATUS_PARTS) {
      for (const [k, v] of Object.entries(status))
        console.log(`  status.${k}: ${Buffer.byteLength(JSON.stringify(v) ?? "")} bytes`);
      for (const p of status.verdict?.perCheck ?? [])
        console.log(`    perCheck ${p.checkId}: ${p.reasoning?.length ?? 0} chars`);
      console.log(`    reasoning: ${status.verdict?.reasoning?.length ?? 0} chars`);
    }
    return {
      bytes: Buffer.byteLength(JSON.stringify(resource)),
      ms,
      checks: check.checks.length,
      findings: check.checks.reduce((n, c) => n + c.findings.length, 0),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) {
    const r = await measureStatusSize(file);
    console.log(
      `${path.basename(file)}: Detection ${(r.bytes / 1024).toFixed(1)} KiB (${r.bytes} bytes); ${r.checks} checks, ${r.findings} findings; steps ${(r.ms / 1000).toFixed(1)} s`,
    );
  }
}
