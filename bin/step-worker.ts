import http from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { ConfigError, loadConfig } from "../core/config.js";
import { STEP_NAMES, type StepName } from "../core/detection.js";
import type { WorkloadSpec, WorkloadStatus } from "../core/ports.js";
import { createLocalWorkloadRunner } from "../platform/local/workload-runner.js";
import { consumeStepQueue, type StepJobResult, stepQueueName } from "../platform/redis/step-queues.js";
import { stepWorkerSettingsFromEnv } from "./cluster-config.js";
import { componentLogger, NEUTRAL_LINES } from "./logging.js";
import pino from "pino";
import { envForSteps } from "./step-env.js";

/**
 * `docverify step-worker --step <prepare|check|agent>`: a warm step worker of the cluster runtime
 * (`stepMode: workers`; the chart runs a Deployment of them per step kind). It takes steps of its one kind
 * from that kind's Redis queue (platform/redis/step-queues.ts) and runs each in one of its warm child
 * processes, with the standalone runner's code (platform/local/workload-runner.ts + worker-pool.ts): the
 * memory cap of DOCVERIFY_STEP_MEMORY_MB (V8's heap + a resident-size watchdog → OOMKilled), the step's
 * time limit (→ DeadlineExceeded), a child replaced after DOCVERIFY_WORKER_MAX_STEPS steps or when it keeps
 * its memory, and a child that dies mid-step replaced (the step Failed "Error", retried by the operator).
 * The steps see this process's environment without REDIS_URL and the operator's settings (step-env.ts),
 * plus DOCVERIFY_RUNTIME=cluster (their object store is S3). /healthz and /metrics on PORT.
 */
export async function runStepWorker(args: string[]): Promise<number> {
  const i = args.indexOf("--step");
  const step = i >= 0 ? args[i + 1] : undefined;
  if (!step || !(STEP_NAMES as readonly string[]).includes(step)) {
    throw new ConfigError(
      `docverify step-worker --step takes one of ${STEP_NAMES.join(", ")}${step ? `, not "${step}"` : ""}.`,
    );
  }
  const kind = step as StepName;
  const config = loadConfig(process.env, { host: "0.0.0.0" });
  if (!config.redisUrl)
    throw new ConfigError("REDIS_URL is not set; a step worker takes its steps from the operator's Redis.");
  const settings = stepWorkerSettingsFromEnv(process.env);
  const log = pino({
    level: config.logLevel,
    base: { service: "docverify", process: "step-worker", step: kind },
    hooks: NEUTRAL_LINES,
  });
  const entry = process.argv[1];
  if (!entry) throw new Error("Cannot tell which script is running (process.argv[1] is empty).");

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const finished = new Counter({
    name: "docverify_step_worker_steps_total",
    help: "Steps this worker finished, by outcome (Succeeded, or the failure reason).",
    labelNames: ["step", "outcome"],
    registers: [metrics],
  });
  const runningGauge = new Gauge({
    name: "docverify_step_worker_running",
    help: "Steps this worker runs now.",
    labelNames: ["step"],
    registers: [metrics],
  });

  const runner = createLocalWorkloadRunner({
    command: process.execPath,
    args: [...process.execArgv, entry],
    workers: settings.processes,
    steps: [kind],
    maxStepsPerWorker: settings.maxStepsPerProcess,
    baseEnv: { ...envForSteps(process.env), DOCVERIFY_RUNTIME: "cluster" },
    log: componentLogger(log, "runner"),
    memoryLimitMb: config.stepMemoryMb,
  });
  const waiters = new Map<string, () => void>();
  runner.onChange(() => {
    for (const w of [...waiters.values()]) w();
  });

  /** Runs one step in a warm child and answers its outcome; a delete from the operator kills it. */
  async function run(spec: WorkloadSpec, signal: AbortSignal): Promise<StepJobResult> {
    const started = Date.now();
    const slog = log.child({ workload: spec.name, detection: spec.owner.name });
    await runner.start(spec);
    runningGauge.inc({ step: kind });
    const result = await new Promise<StepJobResult>((resolve) => {
      let done = false;
      const end = (r: StepJobResult) => {
        if (done) return;
        done = true;
        waiters.delete(spec.name);
        signal.removeEventListener("abort", onAbort);
        void runner.delete(spec.name);
        resolve(r);
      };
      const look = async () => {
        const s: WorkloadStatus | undefined = await runner.get(spec.name);
        if (!s) return end({ state: "Failed", reason: "Lost", message: "The step's process was lost." });
        if (s.state !== "Succeeded" && s.state !== "Failed") return;
        const r: StepJobResult = { state: s.state };
        for (const k of ["exitCode", "reason", "message", "startedAt", "finishedAt"] as const)
          if (s[k] !== undefined) (r as unknown as Record<string, unknown>)[k] = s[k];
        end(r);
      };
      const onAbort = () =>
        end({
          state: "Failed",
          reason: "Deleted",
          message: "The operator deleted the step's workload while it ran.",
        });
      signal.addEventListener("abort", onAbort, { once: true });
      waiters.set(spec.name, () => void look());
      void look();
    });
    runningGauge.dec({ step: kind });
    finished.inc({
      step: kind,
      outcome: result.state === "Succeeded" ? "Succeeded" : (result.reason ?? "Error"),
    });
    slog.info(
      { state: result.state, reason: result.reason, exitCode: result.exitCode, ms: Date.now() - started },
      "step finished",
    );
    return result;
  }

  const consumer = consumeStepQueue({
    connection: config.redisUrl,
    step: kind,
    concurrency: settings.processes,
    leaseMs: settings.leaseMs,
    log: componentLogger(log, "queue"),
    run,
  });

  const server = http.createServer((req, res) => {
    if (req.url === "/metrics") {
      metrics.metrics().then(
        (body) => res.writeHead(200, { "content-type": metrics.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (req.url === "/healthz" || req.url === "/readyz") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ok", step: kind, running: consumer.running() }));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end('{"detail":"Not Found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  process.stderr.write(
    `docverify step-worker ${kind} started (pid ${process.pid}): ${settings.processes} process(es) on queue ${stepQueueName(kind)}; metrics on http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}/metrics\n`,
  );

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "shutting down: finishing the running steps");
      resolve();
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  await consumer.close();
  await runner.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return 0;
}
