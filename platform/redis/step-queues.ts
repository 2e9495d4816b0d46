import { type Job, Queue, QueueEvents, Worker } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import { STEP_NAMES, type StepName } from "../../core/detection.js";
import type { WorkloadRunner, WorkloadSpec, WorkloadState, WorkloadStatus } from "../../core/ports.js";
import type { Logger } from "../../core/step-context.js";

/**
 * Per-step-kind work queues on BullMQ, for the cluster's warm step workers (`stepMode: workers`), beside
 * the admission queue of scheduler.ts (which only hands out slots).
 *
 * - The operator's side is a WorkloadRunner (`createStepQueueRunner`): `start` adds a job to the queue of
 *   the step's kind with jobId = the workload's name (deterministic, so a start repeated after a crash
 *   meets the existing job and adds nothing); `get` reads the job's state (waiting/prioritized/delayed →
 *   Pending, active → Running, completed → the result the worker returned, failed → Failed); `delete`
 *   removes the job, or tells the worker running it to kill the step (a message on a Redis channel).
 * - The worker's side (`consumeStepQueue`) takes jobs of one kind and hands each to `run`; it renews the
 *   job's lock while the step runs (BullMQ's lease). A worker that dies mid-step (kill -9, OOM of the Pod,
 *   a lost node) stops renewing it: the operator's `get` then finds the job active without a lock and
 *   reports it Failed "Lost", as the pod runner reports a Pod that disappeared, and the reconciler retries
 *   the step under `decideRetry` as a new workload. The old job is never run again: the stalled check
 *   (maxStalledCount 0) marks it failed, and the reconciler removes it.
 *
 * The job carries the WorkloadSpec (the step's input and the detection's name, never a secret: the
 * worker's own environment holds the S3 credentials and settings).
 */

export interface StepQueueOptions {
  /** A `redis://` / `rediss://` URL or ioredis options. */
  connection: string | RedisOptions;
  /** Key prefix in Redis (BullMQ's `prefix`); every operator and worker of one deployment uses the same. */
  prefix?: string;
  log: Logger;
}

/** The queue of one step kind. */
export const stepQueueName = (step: StepName): string => `docverify-step-${step}`;

/** Finished jobs stay this long (the operator reads their result and then removes them itself). */
const KEEP_FINISHED_SECONDS = 24 * 3600;

/** What a worker returns for a job: the WorkloadStatus fields a finished step has. */
export interface StepJobResult {
  state: "Succeeded" | "Failed";
  exitCode?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
}

/** The job's data: the workload spec as the reconciler gave it. */
type StepJobData = WorkloadSpec;

/** BullMQ's reason for a job whose worker stopped renewing its lock more often than allowed. */
const STALLED = /stalled/i;

const WORKLOAD_NAME = new RegExp(`^(.+)-(${STEP_NAMES.join("|")})-(\\d+)$`);

/** The step kind and owner a workload name (`<detection>-<step>-<attempt>`) says, if it says one. */
export function parseWorkloadName(name: string): { owner: string; step: StepName } | undefined {
  const m = WORKLOAD_NAME.exec(name);
  return m ? { owner: m[1]!, step: m[2] as StepName } : undefined;
}

/** Redis channel on which the operator asks the worker running a step to stop it. */
const cancelChannel = (prefix: string) => `${prefix}:step-cancel`;

function connect(connection: string | RedisOptions, extra: RedisOptions): Redis {
  return typeof connection === "string"
    ? new Redis(connection, extra)
    : new Redis({ ...connection, ...extra });
}

export interface StepQueueCounts {
  waiting: number;
  prioritized: number;
  delayed: number;
  active: number;
}

export interface StepQueueRunner extends WorkloadRunner {
  /** Jobs per step queue, for the autoscaling gauge (waiting + prioritized + active is the demand). */
  counts(): Promise<Record<StepName, StepQueueCounts>>;
}

/** The operator's WorkloadRunner over the step queues (see the module's comment). */
export function createStepQueueRunner(opts: StepQueueOptions): StepQueueRunner {
  const prefix = opts.prefix ?? "docverify";
  const { log } = opts;
  const commands = connect(opts.connection, { maxRetriesPerRequest: 5 });
  const queues = Object.fromEntries(
    STEP_NAMES.map((s) => [s, new Queue<StepJobData>(stepQueueName(s), { connection: commands, prefix })]),
  ) as Record<StepName, Queue<StepJobData>>;
  const listeners: ((owner: string) => void)[] = [];
  let events: QueueEvents[] = [];
  const eventConnections: Redis[] = [];
  let closed = false;
  let healthy = true;
  const onError = (err: Error) => {
    if (closed) return;
    if (healthy) log.warn({ err: err.message }, "step queues lost their Redis connection; retrying");
    healthy = false;
  };
  commands.on("error", onError);
  commands.on("ready", () => {
    if (!healthy) log.info("step queues reconnected to Redis");
    healthy = true;
  });
  for (const q of Object.values(queues)) q.on("error", onError);

  function notify(jobId: string): void {
    const owner = parseWorkloadName(jobId)?.owner;
    if (!owner || closed) return;
    for (const l of [...listeners]) l(owner);
  }

  function startEvents(): void {
    events = STEP_NAMES.map((s) => {
      const connection = connect(opts.connection, { maxRetriesPerRequest: null });
      connection.on("error", onError);
      eventConnections.push(connection);
      const qe = new QueueEvents(stepQueueName(s), { connection, prefix });
      qe.on("error", onError);
      for (const e of ["active", "completed", "failed", "stalled", "removed"] as const) {
        qe.on(e, ({ jobId }: { jobId: string }) => notify(jobId));
      }
      return qe;
    });
  }

  /**
   * The job and its state, the state read first: a job read before it finished and a state read after
   * would pair a finished state with no result. (A state that moves on after we read it is seen next pass.)
   */
  async function findJob(
    name: string,
  ): Promise<{ job: Job<StepJobData>; step: StepName; state: string } | undefined> {
    const parsed = parseWorkloadName(name);
    const steps = parsed ? [parsed.step] : STEP_NAMES;
    for (const step of steps) {
      const state = await queues[step].getJobState(name);
      if (state === "unknown") continue;
      const job = await queues[step].getJob(name);
      if (job) return { job, step, state };
    }
    return undefined;
  }

  const lockKey = (step: StepName, name: string) => `${queues[step].toKey(name)}:lock`;

  async function getStatus(name: string, again: boolean): Promise<WorkloadStatus | undefined> {
    const found = await findJob(name);
    if (!found) return undefined;
    const { job, step, state } = found;
    const base = { name, step, owner: job.data.owner.name };
    const at = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : undefined);
    const withTimes = (s: WorkloadStatus): WorkloadStatus => {
      const startedAt = at(job.processedOn);
      const finishedAt = at(job.finishedOn);
      return { ...s, ...(startedAt ? { startedAt } : {}), ...(finishedAt ? { finishedAt } : {}) };
    };
    switch (state) {
      case "active": {
        // Active without a lock: the worker that took it stopped renewing its lease (it died). A job that
        // finished between our two reads has no lock either: it is Lost only if it is still active now
        // (finishing removes it from the active list and its lock at once).
        if ((await commands.exists(lockKey(step, name))) === 0) {
          if ((await queues[step].getJobState(name)) !== "active")
            // Read it again; should it change under us twice, say Running: the next pass looks again.
            return again ? getStatus(name, false) : withTimes({ ...base, state: "Running" });
          return withTimes({
            ...base,
            state: "Failed",
            reason: "Lost",
            message: `The worker running the ${step} step stopped renewing its lease (it died or lost Redis).`,
          });
        }
        return withTimes({ ...base, state: "Running" });
      }
      case "completed": {
        const r = job.returnvalue as StepJobResult | null;
        if (!r || (r.state !== "Succeeded" && r.state !== "Failed")) {
          return withTimes({
            ...base,
            state: "Failed",
            reason: "Error",
            message: "The step worker finished the job without a result.",
          });
        }
        const s: WorkloadStatus = { ...base, state: r.state as WorkloadState };
        if (r.exitCode !== undefined) s.exitCode = r.exitCode;
        if (r.reason !== undefined) s.reason = r.reason;
        if (r.message !== undefined) s.message = r.message;
        return { ...withTimes(s), ...(r.startedAt ? { startedAt: r.startedAt } : {}) };
      }
      case "failed": {
        const why = job.failedReason ?? "";
        return withTimes({
          ...base,
          state: "Failed",
          reason: STALLED.test(why) ? "Lost" : "Error",
          message: STALLED.test(why)
            ? `The worker running the ${step} step died mid-step (its lease expired).`
            : `The step worker failed the job: ${why}`,
        });
      }
      default:
        // waiting, prioritized, delayed, waiting-children: not taken by a worker yet (or a stalled
        // job on its way to being failed by the next worker, which never runs it again).
        return { ...base, state: "Pending" };
    }
  }

  return {
    async start(spec) {
      if (closed) throw new Error("The step queues are closed; the service is shutting down.");
      // A job with this id in any state makes BullMQ ignore the add: a repeated start adds nothing.
      await queues[spec.step].add(spec.step, structuredClone(spec), {
        jobId: spec.name,
        attempts: 1,
        removeOnComplete: { age: KEEP_FINISHED_SECONDS },
        removeOnFail: { age: KEEP_FINISHED_SECONDS },
      });
    },

    async get(name) {
      return getStatus(name, true);
    },

    async delete(name) {
      const found = await findJob(name);
      if (!found) return;
      const { step } = found;
      // Removes a job that waits or has finished, or an active one whose worker is gone (no lock).
      if ((await queues[step].remove(name)) === 1) return;
      // Active and locked: the worker running it kills the step; the finished job expires later.
      await commands.publish(cancelChannel(prefix), name);
      log.info({ workload: name }, "asked the step worker to stop a running step");
    },

    onChange(listener) {
      listeners.push(listener);
      if (events.length === 0 && !closed) startEvents();
    },

    async counts() {
      const out = {} as Record<StepName, StepQueueCounts>;
      for (const s of STEP_NAMES) {
        const c = await queues[s].getJobCounts("waiting", "prioritized", "delayed", "active");
        out[s] = {
          waiting: c.waiting ?? 0,
          prioritized: c.prioritized ?? 0,
          delayed: c.delayed ?? 0,
          active: c.active ?? 0,
        };
      }
      return out;
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(events.map((e) => e.close().catch(() => undefined)));
      for (const c of eventConnections) c.disconnect();
      await Promise.all(Object.values(queues).map((q) => q.close().catch(() => undefined)));
      await commands.quit().catch(() => undefined);
      commands.disconnect();
    },
  };
}

export interface ConsumeStepQueueOptions extends StepQueueOptions {
  step: StepName;
  /** Steps run at once by this worker (its warm child processes). */
  concurrency: number;
  /**
   * The job's lease: renewed every half of it while the step runs; a worker silent for longer is taken
   * for dead and its step is retried. Default 30 s.
   */
  leaseMs?: number;
  /** Runs one step; `signal` aborts when the operator deleted the workload (kill the step then). */
  run(spec: WorkloadSpec, signal: AbortSignal): Promise<StepJobResult>;
}

export interface StepQueueConsumer {
  /** Steps running now. */
  running(): number;
  /** Stops taking jobs, lets the running ones finish (or `force`: leaves them to the stalled check). */
  close(force?: boolean): Promise<void>;
}

/** The worker's side: takes jobs of one step kind and runs each through `opts.run`. */
export function consumeStepQueue(opts: ConsumeStepQueueOptions): StepQueueConsumer {
  const prefix = opts.prefix ?? "docverify";
  const { log, step } = opts;
  const leaseMs = opts.leaseMs ?? 30_000;
  const connection = connect(opts.connection, { maxRetriesPerRequest: null });
  const subscriber = connect(opts.connection, { maxRetriesPerRequest: null });
  const controllers = new Map<string, AbortController>();

  const worker = new Worker<StepJobData, StepJobResult>(
    stepQueueName(step),
    async (job) => {
      const spec = job.data;
      if (spec.step !== step) {
        // Never run a step of another kind (the prepare step's process stays apart from check's).
        return {
          state: "Failed",
          reason: "Error",
          exitCode: 1,
          message: `A ${step} worker was handed a ${spec.step} step; it did not run it.`,
        };
      }
      const abort = new AbortController();
      controllers.set(spec.name, abort);
      try {
        return await opts.run(spec, abort.signal);
      } finally {
        controllers.delete(spec.name);
      }
    },
    {
      connection,
      prefix,
      concurrency: opts.concurrency,
      lockDuration: leaseMs,
      stalledInterval: leaseMs,
      // A job whose worker died is failed by the stalled check, never handed to another worker: the
      // operator retries the step as a new workload (decideRetry), so a step never runs twice at once.
      maxStalledCount: 0,
    },
  );
  worker.on("error", (err) => log.warn({ err: err.message, queue: stepQueueName(step) }, "step queue error"));
  worker.on("stalled", (jobId) => log.warn({ workload: jobId }, "a step whose worker died was failed"));

  subscriber.on("message", (_channel: string, name: string) => {
    const c = controllers.get(name);
    if (!c) return;
    log.info({ workload: name }, "the operator deleted a running step; stopping it");
    c.abort();
  });
  void subscriber.subscribe(cancelChannel(prefix)).catch((err: unknown) => {
    log.warn({ err: (err as Error).message }, "could not subscribe to step cancellations");
  });

  return {
    running: () => controllers.size,
    async close(force = false) {
      await worker.close(force).catch(() => undefined);
      await subscriber.quit().catch(() => undefined);
      subscriber.disconnect();
      await connection.quit().catch(() => undefined);
      connection.disconnect();
    },
  };
}
