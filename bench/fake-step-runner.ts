/**
 * A fast fake WorkloadRunner for the scale bench (bench/scale.ts): instead of a Pod per step it writes the
 * step's result to the object store at once, as a real step would at its end, and reports the workload
 * Succeeded. Everything around it is real: the reconciler, the resource store on the apiserver, the
 * scheduler on Redis, the archive on S3 and the API. Not used by the service or its tests.
 */
import {
  type AgentStepResult,
  type CheckStepResult,
  keys,
  type PrepareResult,
  StepInput,
} from "../core/detection.js";
import type { ObjectStore, WorkloadRunner, WorkloadSpec, WorkloadStatus } from "../core/ports.js";
import { writeStepResult } from "../core/step-results.js";

const CHECK_IDS = [
  "file.type",
  "metadata.dates",
  "metadata.producer",
  "fonts.consistency",
  "layout.overlay",
  "text.arithmetic",
  "text.identifiers",
  "image.metadata",
  "pdf.revisions",
  "qr.codes",
  "signature.pdf",
];

function resultOf(spec: WorkloadSpec): PrepareResult | CheckStepResult | AgentStepResult {
  const input = StepInput.parse(JSON.parse(spec.env.DOCVERIFY_STEP_INPUT ?? "{}"));
  const name = input.detection;
  // Scores spread from the detection's id, so listings differ from item to item.
  const score = Number.parseInt(name.slice(-2), 36) % 101;
  if (spec.step === "prepare") {
    return {
      step: "prepare",
      document: {
        filename: "statement.pdf",
        contentType: "application/pdf",
        sizeBytes: 48_213,
        key: keys.document(name, "statement.pdf"),
        sha256: "0".repeat(64),
      },
    };
  }
  if (spec.step === "check") {
    return {
      step: "check",
      checks: CHECK_IDS.map((checkId, i) => ({
        checkId,
        outcome: i % 4 === 1 ? ("flag" as const) : ("pass" as const),
        severity: i % 4 === 1 ? 4 : 0,
        summary: `${checkId}: ${i % 4 === 1 ? "one finding" : "nothing found"}.`,
        findings:
          i % 4 === 1
            ? [
                {
                  code: "bench_finding",
                  message: "A finding of the bench.",
                  page: 1,
                  bbox: [10, 20, 110, 40],
                },
              ]
            : [],
      })),
      discovered: ["metadata_present"],
    };
  }
  return {
    step: "agent",
    runId: `run-${name.slice(4)}`,
    engine: "rules",
    verdict: {
      fraudScore: score,
      documentTypeMatch: true,
      actualDocType: input.spec.docType,
      reasoning: `Low risk (fraud score ${score}). ${"Three checks flagged one finding each; none of them alone suggests tampering. ".repeat(12)}`,
      perCheck: CHECK_IDS.map((checkId, i) => ({
        checkId,
        importance: i % 4 === 1 ? 4 : 0,
        reasoning: i % 4 === 1 ? "One finding of moderate weight." : "Nothing found.",
      })),
    },
  };
}

export function createFakeStepRunner(opts: { objects: ObjectStore; bucket: string }): WorkloadRunner & {
  started(): number;
} {
  const workloads = new Map<string, WorkloadStatus>();
  const listeners: ((owner: string) => void)[] = [];
  let started = 0;
  return {
    started: () => started,
    async start(spec) {
      if (workloads.has(spec.name)) return;
      started++;
      const status: WorkloadStatus = {
        name: spec.name,
        step: spec.step,
        owner: spec.owner.name,
        state: "Running",
        startedAt: new Date().toISOString(),
      };
      workloads.set(spec.name, status);
      void (async () => {
        try {
          const result = resultOf(spec);
          const resultKey = await writeStepResult(opts.objects, opts.bucket, spec.owner.name, result);
          status.state = "Succeeded";
          status.exitCode = 0;
          status.message = JSON.stringify({ ok: true, step: spec.step, resultKey });
        } catch (err) {
          status.state = "Failed";
          status.exitCode = 1;
          status.reason = "Error";
          status.message = String(err);
        }
        status.finishedAt = new Date().toISOString();
        for (const l of listeners) l(spec.owner.name);
      })();
    },
    async get(name) {
      const s = workloads.get(name);
      return s ? { ...s } : undefined;
    },
    async delete(name) {
      workloads.delete(name);
    },
    onChange(listener) {
      listeners.push(listener);
    },
    async close() {
      workloads.clear();
    },
  };
}
