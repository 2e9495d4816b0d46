import { describe, expect, it } from "vitest";
import type { StepStatus } from "../core/detection.js";
import type { WorkloadStatus } from "../core/ports.js";
import { crashFailureCode, nextStep, observeWorkload, retryDelayMs } from "./step-policy.js";

const w = (over: Partial<WorkloadStatus>): WorkloadStatus => ({
  name: "det-x-check-1",
  step: "check",
  owner: "det-x",
  state: "Running",
  ...over,
});
const s = (name: StepStatus["name"], state: StepStatus["state"]): StepStatus => ({
  name,
  state,
  attempt: 1,
  workload: `det-x-${name}-1`,
});

describe("observeWorkload", () => {
  it("maps every workload state", () => {
    expect(observeWorkload(w({ state: "Pending" }))).toEqual({ kind: "waiting", state: "Pending" });
    expect(observeWorkload(w({ state: "Running" }))).toEqual({ kind: "waiting", state: "Running" });
    expect(observeWorkload(w({ state: "Succeeded", exitCode: 0 }))).toEqual({ kind: "succeeded" });
  });
  it("treats a missing workload as lost", () => {
    expect(observeWorkload(undefined)).toMatchObject({ kind: "failed", reason: "Lost" });
  });
  it("explains failures by reason", () => {
    expect(observeWorkload(w({ state: "Failed", reason: "DeadlineExceeded" }))).toMatchObject({
      kind: "failed",
      reason: "DeadlineExceeded",
      message: expect.stringContaining("time limit"),
    });
    expect(observeWorkload(w({ state: "Failed", reason: "OOMKilled" })).kind).toBe("failed");
    const crashed = observeWorkload(w({ state: "Failed", exitCode: 3, message: '{"ok":false,"error":"x"}' }));
    expect(crashed).toMatchObject({
      reason: "Error",
      message: expect.stringContaining("exited with code 3"),
    });
  });
});

describe("nextStep", () => {
  it("walks prepare → check → agent", () => {
    expect(nextStep(undefined, false)).toBe("prepare");
    expect(nextStep([s("prepare", "Running")], false)).toBe("prepare");
    expect(nextStep([s("prepare", "Succeeded")], false)).toBe("check");
    expect(nextStep([s("prepare", "Succeeded"), s("check", "Failed")], false)).toBe("check");
    expect(nextStep([s("prepare", "Succeeded"), s("check", "Succeeded")], false)).toBe("agent");
    expect(
      nextStep([s("prepare", "Succeeded"), s("check", "Succeeded"), s("agent", "Succeeded")], false),
    ).toBe(undefined);
  });
  it("skips the agent when a check was authoritative", () => {
    expect(nextStep([s("prepare", "Succeeded"), s("check", "Succeeded")], true)).toBe(undefined);
  });
});

describe("crash codes and backoff", () => {
  it("fails with the step's code", () => {
    expect(crashFailureCode("prepare")).toBe("internal_error");
    expect(crashFailureCode("check")).toBe("check_failed");
    expect(crashFailureCode("agent")).toBe("agent_failed");
  });
  it("backs off exponentially with a cap", () => {
    expect([1, 2, 3, 4].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(20)).toBe(30_000);
  });
});
