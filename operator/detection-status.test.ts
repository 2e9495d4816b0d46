import { describe, expect, it } from "vitest";
import type { CheckResult } from "../core/check-result.js";
import { API_GROUP_VERSION } from "../core/resource.js";
import {
  type AgentStepResult,
  type CheckStepResult,
  type Detection,
  DETECTION_KIND,
  type DetectionStatus,
  type PrepareResult,
  STEP_NAMES,
  type StepName,
  summarizeChecks,
} from "../core/detection.js";
import { FAILURE_CODES, type FailureCode, failure } from "../core/failure-codes.js";
import type { Verdict } from "../core/verdict.js";
import {
  attemptFailed,
  attemptStarted,
  attemptSucceeded,
  attemptWaiting,
  complete,
  deadlineOf,
  fail,
  observeGeneration,
  pruned,
  queued,
  running,
  type StepResult,
  statusTooLarge,
  terminalEvent,
  upgradeLegacyStatus,
} from "./detection-status.js";
import { decideRetry, retryDelayMs } from "./step-policy.js";

const now = new Date("2026-03-01T10:00:00.000Z");
const earlier = "2026-03-01T09:59:00.000Z";
const MAX = 3;
const settings = { stepMaxAttempts: MAX, retentionSeconds: 3600 };
const ATTEMPTS = Array.from({ length: MAX }, (_, i) => i + 1);
/** Every reason an attempt can fail with: from the runners (both runtimes) and from the reconciler. */
const REASONS = [
  "Error",
  "DeadlineExceeded",
  "OOMKilled",
  "Lost",
  "Deleted",
  "Evicted",
  "ResultMissing",
] as const;
/** The retry policy spelled out (docs/decisions.md, "Retries"): what decideRetry must decide. */
const OUT_OF_RESOURCES = new Set<string>(["DeadlineExceeded", "OOMKilled"]);
const CRASH_CODE: Record<StepName, FailureCode> = {
  prepare: "internal_error",
  check: "check_failed",
  agent: "agent_failed",
};
const RESOURCE_CODE: Record<StepName, FailureCode> = {
  prepare: "internal_error",
  check: "document_too_complex",
  agent: "agent_failed",
};
const NOT_AGAIN = "Not retried again: it would run out of time or memory again on the same document.";
type Expected = { retry: true } | { retry: false; code: FailureCode; event: string; log: string };
function expectedAfter(step: StepName, reason: string, attempt: number, max: number): Expected {
  const resources = OUT_OF_RESOURCES.has(reason);
  // Out of time or memory: one retry at most.
  if (resources && attempt >= 2)
    return {
      retry: false,
      code: RESOURCE_CODE[step],
      event: NOT_AGAIN,
      log: "step failed; not retried (out of time or memory again)",
    };
  if (attempt >= max)
    return {
      retry: false,
      code: resources ? RESOURCE_CODE[step] : CRASH_CODE[step],
      event: "No attempts left.",
      log: "step failed; no attempts left",
    };
  return { retry: true };
}

const detection = (sample = false): Detection => ({
  apiVersion: API_GROUP_VERSION,
  kind: DETECTION_KIND,
  metadata: { name: "det-x", generation: 2, creationTimestamp: "2026-03-01T09:00:00.000Z" },
  spec: {
    source: { url: "https://example.com/a.pdf" },
    docType: "invoice",
    region: "GB",
    submittedBy: "c1",
    sample,
    priority: "interactive",
  },
});

const document = {
  filename: "a.pdf",
  contentType: "application/pdf",
  sizeBytes: 10,
  key: "documents/det-x/a.pdf",
  sha256: "0".repeat(64),
};
const checks: CheckResult[] = [
  { checkId: "file.type", outcome: "pass", severity: 0, summary: "Agree.", findings: [] },
  {
    checkId: "metadata.dates",
    outcome: "flag",
    severity: 6,
    summary: "Dates disagree.",
    findings: [
      { code: "modified_before_created", message: "Modified before it was created.", page: 1 },
      { code: "future_date", message: "A date lies in the future.", evidence: { date: "2099-01-01" } },
    ],
  },
];
const verdict: Verdict = {
  fraudScore: 12,
  documentTypeMatch: true,
  actualDocType: "invoice",
  reasoning: "Nothing found.",
  perCheck: [],
};

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** A running detection whose earlier steps succeeded and whose `step` runs its attempt `attempt`. */
function runningAt(step: StepName, attempt: number): DetectionStatus {
  const order = STEP_NAMES.slice(0, STEP_NAMES.indexOf(step));
  return deepFreeze({
    phase: "Running",
    startedAt: earlier,
    billable: true,
    conditions: [{ type: "Ready", status: "False", reason: "X", message: "x", lastTransitionTime: earlier }],
    ...(step !== "prepare" ? { document } : {}),
    ...(step === "agent" ? { checks: summarizeChecks(checks), discovered: ["metadata_present"] } : {}),
    steps: [
      ...order.map((s) => ({
        name: s,
        workload: `det-x-${s}-1`,
        attempt: 1,
        state: "Succeeded" as const,
        startedAt: earlier,
        finishedAt: earlier,
      })),
      {
        name: step,
        workload: `det-x-${step}-${attempt}`,
        attempt,
        state: "Running" as const,
        startedAt: earlier,
        message: "an earlier note",
      },
    ],
  });
}

interface ResultCase {
  name: string;
  result: StepResult;
  /** The phase after it; Running = the next step runs. */
  phase: "Running" | "Completed" | "Failed";
  code?: FailureCode;
  expect?: (s: DetectionStatus) => void;
}

const PREPARE_FAILURES: FailureCode[] = [
  "source_unreachable",
  "source_forbidden",
  "source_http_error",
  "source_too_large",
  "source_timeout",
  "upload_not_found",
  "unsupported_content_type",
  "internal_error",
];

const RESULTS: Record<StepName, ResultCase[]> = {
  prepare: [
    {
      name: "a stored document",
      result: { step: "prepare", document } satisfies PrepareResult,
      phase: "Running",
      expect: (s) => expect(s.document).toEqual(document),
    },
    ...PREPARE_FAILURES.map(
      (code): ResultCase => ({
        name: `a refusal (${code})`,
        result: { step: "prepare", failure: failure(code) },
        phase: "Failed",
        code,
        expect: (s) => expect(s.document).toBeUndefined(),
      }),
    ),
    {
      name: "neither a document nor a failure",
      result: { step: "prepare" },
      phase: "Failed",
      code: "internal_error",
    },
  ],
  check: [
    {
      name: "check results",
      result: {
        step: "check",
        checks,
        discovered: ["qr_present"],
        textKey: "runs/det-x/text.txt",
      } satisfies CheckStepResult,
      phase: "Running",
      expect: (s) => {
        // The status keeps a summary per check; the findings stay in the check step's result object.
        expect(s.checks).toEqual(
          checks.map((c) => ({
            checkId: c.checkId,
            outcome: c.outcome,
            severity: c.severity,
            findingCount: c.findings.length,
          })),
        );
        expect(JSON.stringify(s)).not.toContain('"findings"');
        expect(s.discovered).toEqual(["qr_present"]);
        expect(s.authoritative).toBeUndefined();
      },
    },
    ...(["corroborated", "unattested"] as const).map(
      (trust): ResultCase => ({
        name: `an authoritative ${trust} result`,
        result: {
          step: "check",
          checks,
          discovered: ["signature_present"],
          authoritative: { checkId: "signature.pdf", trust, directive: `${trust}: signed.` },
        },
        phase: "Completed",
        expect: (s) => {
          expect(s.authoritative).toMatchObject({ checkId: "signature.pdf", trust });
          expect(s.conditions?.[0]).toMatchObject({ status: "True", reason: "Authoritative" });
          expect(s.score).toBeUndefined();
          expect(s.verdictExpiresAt).toBeUndefined();
        },
      }),
    ),
    ...(["document_unreadable", "document_encrypted", "document_too_complex", "check_failed"] as const).map(
      (code): ResultCase => ({
        name: `a failure (${code})`,
        result: { step: "check", checks: [], discovered: [], failure: failure(code) },
        phase: "Failed",
        code,
        expect: (s) => expect(s.checks).toBeUndefined(),
      }),
    ),
  ],
  agent: [
    {
      name: "a verdict",
      result: { step: "agent", runId: "run-1", engine: "rules", verdict } satisfies AgentStepResult,
      phase: "Completed",
      expect: (s) => {
        expect(s.verdict).toEqual(verdict);
        expect(s.score).toBe(12);
        expect(s.agent).toEqual({ runId: "run-1" });
        expect(s.verdictExpiresAt).toBe("2026-03-01T11:00:00.000Z");
        expect(s.conditions?.[0]).toMatchObject({ status: "True", reason: "Completed" });
      },
    },
    {
      name: "a verdict with an engine error noted",
      result: {
        step: "agent",
        runId: "run-1",
        engine: "rules",
        verdict,
        error: "The model timed out; rules decided.",
      },
      phase: "Completed",
      expect: (s) =>
        expect(s.agent).toEqual({ runId: "run-1", error: "The model timed out; rules decided." }),
    },
    {
      name: "a failure with an error",
      result: {
        step: "agent",
        runId: "run-1",
        engine: "rules",
        failure: failure("agent_failed"),
        error: "No model.",
      },
      phase: "Failed",
      code: "agent_failed",
      expect: (s) => expect(s.agent).toEqual({ runId: "run-1", error: "No model." }),
    },
    {
      name: "neither a verdict nor a failure",
      result: { step: "agent", runId: "run-1", engine: "rules" },
      phase: "Failed",
      code: "agent_failed",
    },
  ],
};

describe("attemptSucceeded: every step × every result × every attempt", () => {
  for (const step of STEP_NAMES) {
    for (const c of RESULTS[step]) {
      for (const attempt of ATTEMPTS) {
        it(`${step}, attempt ${attempt}: ${c.name} → ${c.phase}${c.code ? ` (${c.code})` : ""}`, () => {
          const before = runningAt(step, attempt);
          const t = attemptSucceeded(before, c.result, now, settings);
          const s = t.status;
          expect(s.steps?.find((x) => x.name === step)).toEqual({
            name: step,
            workload: `det-x-${step}-${attempt}`,
            attempt,
            state: "Succeeded",
            startedAt: earlier,
            finishedAt: now.toISOString(),
          });
          expect(s.phase).toBe(c.phase);
          const stepEvent = {
            type: "Normal",
            reason: "StepSucceeded",
            message: `The ${step} step succeeded (attempt ${attempt}).`,
          };
          if (c.phase === "Running") {
            expect(t.events).toEqual([stepEvent]);
            expect(s.completedAt).toBeUndefined();
            expect(s.failure).toBeUndefined();
          } else {
            // The step's own event first, then the detection's end.
            expect(t.events).toEqual([stepEvent, terminalEvent(s)]);
            expect(s.completedAt).toBe(now.toISOString());
          }
          if (c.phase === "Failed") {
            expect(s.failure).toEqual(failure(c.code as FailureCode));
            expect(s).toMatchObject({ billable: false, score: null, verdict: null });
            expect(s.conditions?.[0]).toMatchObject({
              status: "False",
              message: failure(c.code as FailureCode).message,
            });
          }
          if (c.phase === "Completed") expect(s.billable).toBe(true);
          expect(t.retryInMs).toBeUndefined();
          c.expect?.(s);
        });
      }
    }
  }
});

describe("attemptFailed: every step × every reason × every attempt", () => {
  for (const step of STEP_NAMES) {
    for (const reason of REASONS) {
      for (const attempt of [...ATTEMPTS, MAX + 1]) {
        const want = expectedAfter(step, reason, attempt, MAX);
        it(`${step}, attempt ${attempt}, ${reason} → ${want.retry ? "retries" : `fails with ${want.code}`}`, () => {
          const before = runningAt(step, attempt);
          const t = attemptFailed(before, { step, reason, message: "It went wrong." }, now, settings);
          const s = t.status;
          const entry = s.steps?.find((x) => x.name === step);
          expect(entry).toMatchObject({
            attempt,
            state: "Failed",
            finishedAt: now.toISOString(),
            message: `${reason}: It went wrong.`,
          });
          // Earlier steps are untouched.
          expect(s.steps?.filter((x) => x.name !== step)).toEqual(
            before.steps?.filter((x) => x.name !== step),
          );
          if (want.retry) {
            const delay = retryDelayMs(attempt);
            expect(t.retryInMs).toBe(delay);
            expect(entry?.retryAt).toBe(new Date(now.getTime() + delay).toISOString());
            expect(s.phase).toBe("Running");
            expect(s.failure).toBeUndefined();
            expect(t.events).toEqual([
              {
                type: "Warning",
                reason: "StepFailed",
                message: `${reason}: It went wrong. Retrying in ${Math.round(delay / 1000)} s.`,
              },
            ]);
            expect(t.log).toMatchObject({
              level: "warn",
              fields: { step, attempt, reason, retryInMs: delay },
            });
          } else {
            const code = want.code;
            expect(t.retryInMs).toBeUndefined();
            expect(entry?.retryAt).toBeUndefined();
            expect(s).toMatchObject({
              phase: "Failed",
              failure: failure(code),
              billable: false,
              score: null,
            });
            expect(s.agent?.error).toBe(
              step === "agent" ? `The agent step failed ${attempt} times; last: It went wrong.` : undefined,
            );
            expect(t.events).toEqual([
              {
                type: "Warning",
                reason: "StepFailed",
                message: `${reason}: It went wrong. ${want.event}`,
              },
              {
                type: "Warning",
                reason: "Failed",
                message: `The detection failed (${code}): ${failure(code).message}`,
              },
            ]);
            expect(t.log).toMatchObject({ level: "error", msg: want.log });
          }
        });
      }
    }
  }

  it("cuts long messages: 500 characters in the step, 300 in agent_error", () => {
    const t = attemptFailed(
      runningAt("agent", MAX),
      { step: "agent", reason: "Error", message: "x".repeat(2000) },
      now,
      settings,
    );
    expect(t.status.steps?.at(-1)?.message).toHaveLength(500);
    expect(t.status.agent?.error?.length).toBeLessThan(400);
  });
});

describe("decideRetry: the retry policy in one place", () => {
  it("retries a crash or a lost workload with backoff until the attempts run out, whatever the limit", () => {
    for (const max of [1, 2, 3, 4, 6]) {
      for (const step of STEP_NAMES) {
        for (const reason of REASONS.filter((r) => !OUT_OF_RESOURCES.has(r))) {
          for (const attempt of [1, 2, 3, 4, 5, 6, 7]) {
            expect(decideRetry({ step, attempt, reason }, max)).toEqual(
              attempt < max
                ? { retry: true, delayMs: retryDelayMs(attempt) }
                : { retry: false, code: CRASH_CODE[step], why: "attempts" },
            );
          }
        }
      }
    }
  });

  it("retries running out of time or memory once at most, then ends the check document_too_complex", () => {
    for (const max of [1, 2, 3, 4, 6]) {
      for (const step of STEP_NAMES) {
        for (const reason of OUT_OF_RESOURCES) {
          for (const attempt of [1, 2, 3, 4, 5, 6, 7]) {
            const d = decideRetry({ step, attempt, reason }, max);
            if (attempt === 1 && max > 1) expect(d).toEqual({ retry: true, delayMs: retryDelayMs(1) });
            else
              expect(d).toEqual({
                retry: false,
                code: RESOURCE_CODE[step],
                why: attempt >= 2 ? "resources" : "attempts",
              });
          }
        }
      }
    }
  });

  it("treats an unknown reason as the infrastructure's (retried)", () => {
    expect(decideRetry({ step: "check", attempt: 1, reason: "ContainerCannotRun" }, 3)).toMatchObject({
      retry: true,
    });
  });
});

describe("the other transitions", () => {
  it("queues a new detection, billable unless it is a sample run", () => {
    for (const sample of [false, true]) {
      const s = queued({}, detection(sample), now);
      expect(s).toMatchObject({ phase: "Queued", observedGeneration: 2, billable: !sample });
      expect(s.conditions).toEqual([
        {
          type: "Ready",
          status: "False",
          reason: "Queued",
          message: "Waiting for a free slot.",
          lastTransitionTime: now.toISOString(),
          observedGeneration: 2,
        },
      ]);
    }
  });

  it("every condition a pass sets carries the generation it observed; its time moves only when the status flips", () => {
    const later = new Date(now.getTime() + 60_000);
    const q = queued({}, detection(), now);
    const observed = observeGeneration(deepFreeze(running(q, detection(), now)), {
      ...detection(),
      metadata: { ...detection().metadata, generation: 3 },
    });
    expect(observed.observedGeneration).toBe(3);
    const started = attemptStarted(deepFreeze(observed), "prepare", 1, "det-x-prepare-1", later).status;
    // Ready stays False (Queued → PrepareRunning): the same transition time, the new generation.
    expect(started.conditions).toEqual([
      expect.objectContaining({
        reason: "PrepareRunning",
        lastTransitionTime: now.toISOString(),
        observedGeneration: 3,
      }),
    ]);
    const failed = fail(deepFreeze(started), "deadline_exceeded", later).status;
    expect(failed.conditions?.[0]).toMatchObject({
      status: "False",
      lastTransitionTime: now.toISOString(),
      observedGeneration: 3,
    });
    const done = complete(deepFreeze(started), later).status;
    expect(done.conditions?.[0]).toMatchObject({
      status: "True",
      lastTransitionTime: later.toISOString(),
      observedGeneration: 3,
    });
    const tooLarge = statusTooLarge(deepFreeze(started), "too large", later).status;
    expect(tooLarge.conditions?.every((c) => c.observedGeneration === 3)).toBe(true);
    // Nothing to change: the same object back (no write).
    expect(
      observeGeneration(observed, { ...detection(), metadata: { ...detection().metadata, generation: 3 } }),
    ).toBe(observed);
  });

  it("runs an admitted detection, keeping the first admission time; running twice changes nothing", () => {
    const first = running(deepFreeze(queued({}, detection(), now)), detection(), now);
    expect(first).toMatchObject({ phase: "Running", startedAt: now.toISOString(), billable: true });
    expect(running(deepFreeze(first), detection(), new Date(now.getTime() + 5000))).toBe(first);
    const readmitted = running(
      deepFreeze({ ...first, phase: "Queued" }),
      detection(),
      new Date(now.getTime() + 5000),
    );
    expect(readmitted.startedAt).toBe(now.toISOString());
  });

  it("starts every step at every attempt, replacing the step's previous entry", () => {
    for (const step of STEP_NAMES) {
      for (const attempt of ATTEMPTS) {
        const before = runningAt(step, Math.max(1, attempt - 1));
        const t = attemptStarted(before, step, attempt, `det-x-${step}-${attempt}`, now);
        const entries = t.status.steps?.filter((x) => x.name === step);
        expect(entries).toEqual([
          {
            name: step,
            workload: `det-x-${step}-${attempt}`,
            attempt,
            state: "Pending",
            startedAt: now.toISOString(),
          },
        ]);
        expect(t.status.conditions?.[0]).toMatchObject({
          reason: `${step.charAt(0).toUpperCase()}${step.slice(1)}Running`,
          message:
            attempt > 1 ? `Running the ${step} step (attempt ${attempt}).` : `Running the ${step} step.`,
        });
        expect(t.events).toEqual([
          {
            type: "Normal",
            reason: "StepStarted",
            message: `Started the ${step} step (attempt ${attempt}) as det-x-${step}-${attempt}.`,
          },
        ]);
      }
    }
  });

  it("follows the workload from Pending to Running", () => {
    for (const step of STEP_NAMES) {
      const s = attemptWaiting(runningAt(step, 1), step, "Pending");
      expect(s.steps?.at(-1)?.state).toBe("Pending");
    }
  });

  it("fails with any failure code, and says so once", () => {
    for (const code of FAILURE_CODES) {
      const t = fail(runningAt("check", 1), code, now);
      expect(t.status).toMatchObject({ phase: "Failed", failure: failure(code), verdict: null, score: null });
      expect(t.events).toEqual([terminalEvent(t.status)]);
      // Failing what already failed is no new ending.
      expect(fail(deepFreeze(t.status), code, now).events).toEqual([]);
    }
  });

  it("completes, naming the score or the deciding check", () => {
    const scored = complete(deepFreeze({ ...runningAt("agent", 1), score: 40 }), now);
    expect(scored.events).toEqual([
      { type: "Normal", reason: "Completed", message: "The detection completed: fraud score 40." },
    ]);
    const decided = complete(
      deepFreeze({
        ...runningAt("agent", 1),
        authoritative: { checkId: "signature.pdf", trust: "corroborated", directive: "ok" },
      }),
      now,
    );
    expect(decided.events[0]?.message).toBe(
      "The detection completed: decided by signature.pdf (corroborated).",
    );
  });

  it("prunes the verdict and keeps the rest", () => {
    const done = attemptSucceeded(
      runningAt("agent", 1),
      { step: "agent", runId: "r", engine: "rules", verdict },
      now,
      settings,
    ).status;
    const t = pruned(deepFreeze(done), now, 3);
    expect(t.status).toEqual({ ...done, verdict: null, prunedAt: now.toISOString() });
    expect(t.events).toEqual([
      {
        type: "Normal",
        reason: "Pruned",
        message: "Retention period over: the verdict and 3 stored file(s) were removed.",
      },
    ]);
  });

  it("counts the deadline from admission, and bounds the wait for one", () => {
    const d = detection();
    expect(deadlineOf(d, { startedAt: earlier }, 120, now, 86_400_000)).toBe(Date.parse(earlier) + 120_000);
    expect(deadlineOf(d, {}, 120, now, 86_400_000)).toBe(Date.parse("2026-03-01T09:00:00.000Z") + 86_400_000);
  });

  it("has no ending event while running", () => {
    expect(terminalEvent(runningAt("check", 1))).toBeUndefined();
  });
});

describe("statusTooLarge", () => {
  it("fails the detection with internal_error, says why in the condition and a Warning event, keeps the checks' summary", () => {
    const before = runningAt("agent", 1);
    const t = statusTooLarge(
      before,
      "Detection det-x would be 600000 bytes, over the 524288-byte limit",
      now,
    );
    expect(t.status).toMatchObject({
      phase: "Failed",
      failure: failure("internal_error"),
      billable: false,
      score: null,
      verdict: null,
      completedAt: now.toISOString(),
      checks: before.checks,
    });
    expect(t.status.conditions?.[0]).toMatchObject({
      type: "Ready",
      status: "False",
      reason: "StatusTooLarge",
      message: expect.stringMatching(/over the 524288-byte limit/),
    });
    expect(t.events.map((e) => `${e.type} ${e.reason}`)).toEqual([
      "Warning StatusTooLarge",
      "Warning Failed",
    ]);
    expect(statusTooLarge(before, "x", now, { keepChecks: false }).status.checks).toBeUndefined();
  });
});

describe("upgradeLegacyStatus", () => {
  it("reads a status written with full check results as the per-check summary; leaves a current one alone", () => {
    const legacy = { phase: "Running", checks } as unknown as DetectionStatus;
    const up = upgradeLegacyStatus(legacy);
    expect(up.checks).toEqual(summarizeChecks(checks));
    expect(up.phase).toBe("Running");
    const current: DetectionStatus = { phase: "Running", checks: summarizeChecks(checks) };
    expect(upgradeLegacyStatus(current)).toBe(current);
    expect(upgradeLegacyStatus({})).toEqual({});
  });
});
