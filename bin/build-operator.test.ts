import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.js";
import { type Detection, DETECTION_KIND, StepInput } from "../core/detection.js";
import { DETECTION_JOB_KIND, type DetectionJob } from "../core/detection-job.js";
import type { Scheduler, WorkloadRunner, WorkloadStatus } from "../core/ports.js";
import { API_GROUP_VERSION } from "../core/resource.js";
import { type StepResult, writeStepResult } from "../core/step-results.js";
import { MemoryResourceStore } from "../platform/local/memory-resource-store.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { createLocalScheduler } from "../platform/local/scheduler.js";
import { buildOperator, type Operator, type OperatorPorts, operatorMetrics } from "./build-operator.js";

/**
 * The one wiring of the operator (bin/build-operator.ts) on local ports: its parts in start order, a
 * detection driven to Completed through them, and the shutdown order STYLE.md asks for (components in
 * reverse, then the runner, then the scheduler).
 */
const log = pino({ level: "silent" });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-build-operator-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Each step "runs" at once: its result written as a real step's would be, the workload Succeeded. */
function instantRunner(ports: () => OperatorPorts, bucket: string, closed: string[]): WorkloadRunner {
  const workloads = new Map<string, WorkloadStatus>();
  const listeners: ((owner: string) => void)[] = [];
  return {
    async start(spec) {
      if (workloads.has(spec.name)) return;
      const input = StepInput.parse(JSON.parse(spec.env.DOCVERIFY_STEP_INPUT ?? "{}"));
      const results: Record<string, StepResult> = {
        prepare: {
          step: "prepare",
          document: {
            filename: "a.pdf",
            contentType: "application/pdf",
            sizeBytes: 4,
            key: `documents/${input.detection}/a.pdf`,
            sha256: "0".repeat(64),
          },
        },
        check: { step: "check", checks: [], discovered: [] },
        agent: {
          step: "agent",
          runId: "run-1",
          engine: "rules",
          verdict: {
            fraudScore: 9,
            documentTypeMatch: true,
            actualDocType: "invoice",
            reasoning: "r",
            perCheck: [],
          },
        },
      };
      await writeStepResult(ports().objects, bucket, input.detection, results[spec.step]!);
      workloads.set(spec.name, {
        name: spec.name,
        step: spec.step,
        owner: spec.owner.name,
        state: "Succeeded",
        exitCode: 0,
      });
      queueMicrotask(() => {
        for (const l of listeners) l(spec.owner.name);
      });
    },
    get: async (name) => workloads.get(name),
    delete: async (name) => void workloads.delete(name),
    onChange: (l) => void listeners.push(l),
    close: async () => void closed.push("runner"),
  };
}

async function localOperator(): Promise<{ operator: Operator; ports: OperatorPorts; closed: string[] }> {
  const config = { ...loadConfig({}), bucket: "b", archiveAfterSeconds: 0 };
  const closed: string[] = [];
  const objects = createLocalObjectStore(path.join(dir, "objects"));
  await objects.ensureBucket("b");
  const local = createLocalScheduler({ capacity: 2 });
  const scheduler: Scheduler = {
    ...local,
    close: async () => void (closed.push("scheduler"), await local.close()),
  };
  let ports!: OperatorPorts;
  ports = {
    detections: new MemoryResourceStore<Detection>(DETECTION_KIND),
    jobs: new MemoryResourceStore<DetectionJob>(DETECTION_JOB_KIND),
    objects,
    scheduler,
    runner: instantRunner(() => ports, "b", closed),
  };
  let operator: Operator | undefined;
  operator = buildOperator(ports, {
    config,
    log,
    metrics: operatorMetrics(new Registry(), { current: () => operator, jobs: ports.jobs, capacity: 2 }),
    jobSettings: { maxInFlight: 5 },
  });
  return { operator, ports, closed };
}

describe("buildOperator", () => {
  it("builds every part once, in start order", async () => {
    const { operator } = await localOperator();
    expect(operator.components.map((c) => c.name)).toEqual([
      "controller",
      "job-controller",
      "upload-sweeper",
      "archive-pruner",
    ]);
    await operator.stop(); // nothing started: closes the runner and the scheduler only
  });

  it("drives a detection to Completed through the parts it built, then stops them, the runner, the scheduler", async () => {
    const { operator, ports, closed } = await localOperator();
    await operator.start();
    const done = new Promise<Detection>((resolve) => {
      const h = ports.detections.watch(
        {},
        (e) => {
          if (e.object.status?.phase === "Completed") {
            h.stop();
            resolve(e.object);
          }
        },
        () => {},
      );
    });
    await ports.detections.create({
      apiVersion: API_GROUP_VERSION,
      kind: DETECTION_KIND,
      metadata: { name: "det-wired" },
      spec: {
        source: { url: "https://x/a.pdf" },
        docType: "invoice",
        region: "GB",
        submittedBy: "c1",
        sample: false,
        priority: "interactive",
      },
    });
    const d = await done;
    expect(d.status).toMatchObject({ phase: "Completed", score: 9 });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: "Ready", status: "True", observedGeneration: 1 });
    await operator.stop();
    await operator.stop(); // idempotent
    expect(closed).toEqual(["runner", "scheduler"]);
  });
});
