import type { V1ContainerState, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { podToWorkloadStatus } from "./pod-status.js";

function pod(
  phase: string | undefined,
  opts: {
    state?: V1ContainerState;
    reason?: string;
    message?: string;
    deleting?: boolean;
    labels?: boolean;
  } = {},
): V1Pod {
  return {
    metadata: {
      name: "det-01-check-2",
      labels:
        opts.labels === false ? {} : { "docverify.io/detection": "det-01", "docverify.io/step": "check" },
      ownerReferences: [
        {
          apiVersion: "docverify.io/v1alpha1",
          kind: "Detection",
          name: "det-01",
          uid: "u1",
          controller: true,
        },
      ],
      ...(opts.deleting ? { deletionTimestamp: new Date("2026-01-01T00:01:00Z") } : {}),
    },
    status: {
      ...(phase ? { phase } : {}),
      ...(opts.reason ? { reason: opts.reason } : {}),
      ...(opts.message ? { message: opts.message } : {}),
      startTime: new Date("2026-01-01T00:00:00Z"),
      ...(opts.state
        ? {
            containerStatuses: [
              { name: "step", image: "i", imageID: "", ready: false, restartCount: 0, state: opts.state },
            ],
          }
        : {}),
    },
  };
}
const terminated = (exitCode: number, reason: string, message?: string): V1ContainerState => ({
  terminated: {
    exitCode,
    reason,
    ...(message ? { message } : {}),
    startedAt: new Date("2026-01-01T00:00:01Z"),
    finishedAt: new Date("2026-01-01T00:00:09Z"),
  },
});
const SUMMARY = '{"ok":true,"step":"check","resultKey":"runs/det-01/check.json"}';

describe("podToWorkloadStatus", () => {
  it("a Pod without status yet is Pending", () => {
    const s = podToWorkloadStatus({ metadata: pod(undefined).metadata, spec: { containers: [] } });
    expect(s).toEqual({ name: "det-01-check-2", step: "check", owner: "det-01", state: "Pending" });
  });

  it("Pending (also while an image is pulled or backing off) is Pending", () => {
    expect(podToWorkloadStatus(pod("Pending")).state).toBe("Pending");
    const backoff = pod("Pending", {
      state: { waiting: { reason: "ImagePullBackOff", message: "pulling" } },
    });
    expect(podToWorkloadStatus(backoff).state).toBe("Pending");
  });

  it("Pending with a waiting reason that cannot resolve is Failed with that reason", () => {
    const s = podToWorkloadStatus(
      pod("Pending", {
        state: { waiting: { reason: "CreateContainerConfigError", message: 'secret "s3" not found' } },
      }),
    );
    expect(s).toMatchObject({
      state: "Failed",
      reason: "CreateContainerConfigError",
      message: 'secret "s3" not found',
    });
  });

  it("Running is Running, with the Pod's start time", () => {
    const s = podToWorkloadStatus(
      pod("Running", { state: { running: { startedAt: new Date("2026-01-01T00:00:01Z") } } }),
    );
    expect(s).toEqual({
      name: "det-01-check-2",
      step: "check",
      owner: "det-01",
      state: "Running",
      startedAt: "2026-01-01T00:00:00.000Z",
    });
  });

  it("Succeeded carries exit code 0, the termination message and the finish time", () => {
    const s = podToWorkloadStatus(pod("Succeeded", { state: terminated(0, "Completed", `${SUMMARY}\n`) }));
    expect(s).toMatchObject({
      state: "Succeeded",
      exitCode: 0,
      message: SUMMARY,
      finishedAt: "2026-01-01T00:00:09.000Z",
    });
    expect(s.reason).toBeUndefined();
  });

  it("Failed with a non-zero exit is Failed/Error with the exit code and message", () => {
    const s = podToWorkloadStatus(
      pod("Failed", { state: terminated(1, "Error", '{"ok":false,"error":"boom"}') }),
    );
    expect(s).toMatchObject({
      state: "Failed",
      reason: "Error",
      exitCode: 1,
      message: '{"ok":false,"error":"boom"}',
    });
  });

  it("Failed by activeDeadlineSeconds is DeadlineExceeded (the Pod's reason wins)", () => {
    const s = podToWorkloadStatus(
      pod("Failed", {
        reason: "DeadlineExceeded",
        message: "Pod was active on the node longer than the specified deadline",
        state: terminated(137, "Error"),
      }),
    );
    expect(s).toMatchObject({
      state: "Failed",
      reason: "DeadlineExceeded",
      exitCode: 137,
      message: "Pod was active on the node longer than the specified deadline",
    });
  });

  it("Failed because the container ran out of memory is OOMKilled", () => {
    const s = podToWorkloadStatus(pod("Failed", { state: terminated(137, "OOMKilled") }));
    expect(s).toMatchObject({ state: "Failed", reason: "OOMKilled", exitCode: 137 });
  });

  it("Failed because V8 reached its heap limit (the log tail as termination message) is OOMKilled", () => {
    const tail = [
      "<--- Last few GCs --->",
      "[1:0x5f1c2e0]    41023 ms: Mark-Compact 1148.9 (1163.4) -> 1147.2 (1163.7) MB",
      "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
    ].join("\n");
    const s = podToWorkloadStatus(pod("Failed", { state: terminated(134, "Error", tail) }));
    expect(s).toMatchObject({ state: "Failed", reason: "OOMKilled", exitCode: 134 });
    // Another crash stays an Error.
    const other = podToWorkloadStatus(
      pod("Failed", { state: terminated(134, "Error", "Segmentation fault") }),
    );
    expect(other.reason).toBe("Error");
  });

  it("Failed by eviction, with no container status, is Failed with the Pod's reason", () => {
    const s = podToWorkloadStatus(
      pod("Failed", { reason: "Evicted", message: "The node was low on memory." }),
    );
    expect(s).toMatchObject({ state: "Failed", reason: "Evicted", message: "The node was low on memory." });
    expect(s.exitCode).toBeUndefined();
  });

  it("a terminated container while the phase still says Running is judged by its exit code", () => {
    expect(podToWorkloadStatus(pod("Running", { state: terminated(0, "Completed", SUMMARY) })).state).toBe(
      "Succeeded",
    );
    expect(podToWorkloadStatus(pod("Running", { state: terminated(2, "Error") }))).toMatchObject({
      state: "Failed",
      exitCode: 2,
    });
  });

  it("Unknown (the node stopped reporting) counts as still running", () => {
    expect(podToWorkloadStatus(pod("Unknown")).state).toBe("Running");
  });

  it("an unfinished Pod being deleted is Failed with reason Deleted; a finished one keeps its result", () => {
    expect(podToWorkloadStatus(pod("Running", { deleting: true }))).toMatchObject({
      state: "Failed",
      reason: "Deleted",
    });
    expect(
      podToWorkloadStatus(pod("Succeeded", { deleting: true, state: terminated(0, "Completed", SUMMARY) }))
        .state,
    ).toBe("Succeeded");
  });

  it("reads the step and owner from the Pod's name and ownerReference when labels are missing", () => {
    const s = podToWorkloadStatus(pod("Running", { labels: false }));
    expect(s).toMatchObject({ step: "check", owner: "det-01" });
  });

  it("accepts timestamps as strings, as a watch delivers them", () => {
    const p = pod("Succeeded", { state: terminated(0, "Completed") }) as unknown as {
      status: { startTime: unknown; containerStatuses: { state: { terminated: { finishedAt: unknown } } }[] };
    };
    p.status.startTime = "2026-01-01T00:00:00Z";
    p.status.containerStatuses[0]!.state.terminated.finishedAt = "2026-01-01T00:00:09Z";
    const s = podToWorkloadStatus(p as unknown as V1Pod);
    expect(s).toMatchObject({
      startedAt: "2026-01-01T00:00:00.000Z",
      finishedAt: "2026-01-01T00:00:09.000Z",
    });
  });
});
