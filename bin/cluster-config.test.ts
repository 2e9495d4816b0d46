import { describe, expect, it } from "vitest";
import {
  leaderTimings,
  stepModeFromEnv,
  stepPodOptionsFromEnv,
  stepWorkerSettingsFromEnv,
} from "./cluster-config.js";

describe("stepPodOptionsFromEnv", () => {
  const env = {
    DOCVERIFY_STEP_IMAGE: "registry.local/docverify:1.2.3",
    DOCVERIFY_STEP_POD: JSON.stringify({
      imagePullPolicy: "Always",
      resources: { limits: { memory: "1Gi" } },
      stepResources: { check: { limits: { memory: "2Gi" } } },
      nodeSelector: { pool: "steps" },
    }),
    DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
    DOCVERIFY_TOKEN_SIGNING_KEY: "never-for-steps-0123456789abcdef0123",
    DOCVERIFY_CLIENTS_FILE: "/etc/docverify/clients.json",
    S3_ENDPOINT: "http://minio:9000",
    S3_SECRET_KEY: "secret",
    REDIS_URL: "redis://redis:6379",
    HOME: "/root",
  };

  it("passes DOCVERIFY_* and S3_* settings to steps, never the api's secrets or the operator's own wiring", () => {
    const o = stepPodOptionsFromEnv(env);
    expect(o.image).toBe("registry.local/docverify:1.2.3");
    expect(o.env).toEqual({
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      S3_ENDPOINT: "http://minio:9000",
      S3_SECRET_KEY: "secret",
    });
    expect(o).toMatchObject({
      imagePullPolicy: "Always",
      resources: { limits: { memory: "1Gi" } },
      stepResources: { check: { limits: { memory: "2Gi" } } },
      nodeSelector: { pool: "steps" },
    });
  });

  it("with DOCVERIFY_STEP_ENV_SECRET, secrets go by secretKeyRef instead of by value", () => {
    const o = stepPodOptionsFromEnv({ ...env, DOCVERIFY_STEP_ENV_SECRET: "docverify-step-secrets" });
    expect(o.env?.S3_SECRET_KEY).toBeUndefined();
    expect(o.secretEnv).toEqual({
      S3_SECRET_KEY: { secretName: "docverify-step-secrets", key: "S3_SECRET_KEY" },
    });
  });

  it("explains a missing image, bad JSON and unknown keys", () => {
    expect(() => stepPodOptionsFromEnv({})).toThrow(/DOCVERIFY_STEP_IMAGE is not set/);
    expect(() => stepPodOptionsFromEnv({ ...env, DOCVERIFY_STEP_POD: "{" })).toThrow(/not JSON/);
    expect(() => stepPodOptionsFromEnv({ ...env, DOCVERIFY_STEP_POD: '{"resorces":{}}' })).toThrow(
      /DOCVERIFY_STEP_POD is invalid/,
    );
  });
});

describe("leaderTimings", () => {
  it("defaults to client-go's 15 s / 10 s / 2 s and accepts fractions for tests", () => {
    expect(leaderTimings({})).toEqual({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    expect(
      leaderTimings({
        DOCVERIFY_LEASE_DURATION_SECONDS: "3",
        DOCVERIFY_LEASE_RENEW_DEADLINE_SECONDS: "2",
        DOCVERIFY_LEASE_RETRY_PERIOD_SECONDS: "0.5",
      }),
    ).toEqual({ leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 });
  });
  it("refuses an order that cannot work", () => {
    expect(() => leaderTimings({ DOCVERIFY_LEASE_RENEW_DEADLINE_SECONDS: "20" })).toThrow(
      /DURATION_SECONDS >/,
    );
    expect(() => leaderTimings({ DOCVERIFY_LEASE_DURATION_SECONDS: "x" })).toThrow(/positive number/);
  });
});

describe("step mode and step worker settings", () => {
  it("runs a Pod per step unless DOCVERIFY_STEP_MODE says workers; refuses anything else, saying what is allowed", () => {
    expect(stepModeFromEnv({})).toBe("pods");
    expect(stepModeFromEnv({ DOCVERIFY_STEP_MODE: "workers" })).toBe("workers");
    expect(() => stepModeFromEnv({ DOCVERIFY_STEP_MODE: "vms" })).toThrow(/one of pods, workers, got "vms"/);
  });

  it("reads a worker's processes, steps per process and lease, with defaults", () => {
    expect(stepWorkerSettingsFromEnv({})).toEqual({ processes: 1, maxStepsPerProcess: 200, leaseMs: 30_000 });
    expect(
      stepWorkerSettingsFromEnv({
        DOCVERIFY_WORKER_PROCESSES: "3",
        DOCVERIFY_WORKER_MAX_STEPS: "0",
        DOCVERIFY_STEP_LEASE_SECONDS: "4.5",
      }),
    ).toEqual({ processes: 3, maxStepsPerProcess: 0, leaseMs: 4500 });
    expect(() => stepWorkerSettingsFromEnv({ DOCVERIFY_WORKER_PROCESSES: "0" })).toThrow(/at least 1/);
    expect(() => stepWorkerSettingsFromEnv({ DOCVERIFY_STEP_LEASE_SECONDS: "soon" })).toThrow(/at least 1/);
  });
});
