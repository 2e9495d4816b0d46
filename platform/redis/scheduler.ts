import { type Job, Queue, WaitingError, Worker } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import { PRIORITIES, type Priority } from "../../core/detection.js";
import type { Scheduler } from "../../core/ports.js";
import type { Logger } from "../../core/step-context.js";

/** BullMQ priorities: 1 is served first; FIFO within one priority. */
export const BULLMQ_PRIORITY: Record<Priority, number> = { interactive: 1, batch: 5, sample: 10 } as const;

export interface RedisSchedulerOptions {
  /** A `redis://` / `rediss://` URL or ioredis options. */
  connection: string | RedisOptions;
  /** BullMQ queue name; every replica of one deployment must use the same. */
  queueName?: string;
  /** Key prefix in Redis (BullMQ's `prefix`). */
  prefix?: string;
  /** Slots across every replica sharing the queue (BullMQ global concurrency). */
  capacity: number;
  log: Logger;
  /** How long a slot survives its holder's death before another replica re-admits it. Default 30 s. */
  lockDurationMs?: number;
  /** How often each replica looks for slots whose holder died. Default 15 s. */
  stalledIntervalMs?: number;
  /** Longest an idle replica waits before it looks for work again (a freed slot elsewhere). Default 1 s. */
  drainDelaySeconds?: number;
  /** A call that gets no answer from Redis within this fails (Redis down or unreachable). Default 10 s. */
  commandTimeoutMs?: number;
}

/** Redis could not be reached or did not answer in time; `message` says what to check. */
export class SchedulerUnavailableError extends Error {
  override name = "SchedulerUnavailableError";
  readonly code = "SchedulerUnavailable";
}

/** One slot this process holds: the job stays active (locked by our worker) until released. */
interface Held {
  job: Job;
  token: string;
  /** Ends the waiting processor; the job has already been moved (or is gone), so the worker leaves it be. */
  end(): void;
}

export const DEFAULT_QUEUE_NAME = "docverify-admission";

function checkKey(key: string): void {
  if (key === "" || key.includes(":") || `${Number.parseInt(key, 10)}` === key) {
    throw new Error(
      `Scheduler key ${JSON.stringify(key)} is invalid: use a non-empty name without ':' that is not a plain integer (a detection name or uid).`,
    );
  }
}

/** Where the scheduler's Redis is, for messages (never the password). */
function describeRedis(connection: string | RedisOptions): string {
  if (typeof connection !== "string") return `${connection.host ?? "127.0.0.1"}:${connection.port ?? 6379}`;
  try {
    const u = new URL(connection);
    return `${u.hostname}:${u.port || 6379}`;
  } catch {
    return "the configured Redis";
  }
}

function connect(connection: string | RedisOptions, extra: RedisOptions): Redis {
  return typeof connection === "string"
    ? new Redis(connection, extra)
    : new Redis({ ...connection, ...extra });
}

/**
 * The cluster scheduler on BullMQ: one job per key (jobId = key, so a duplicate submit is ignored),
 * priority interactive=1, batch=5, sample=10, and a queue-wide (global) concurrency of `capacity`, so any
 * number of operator replicas together never hold more slots. A replica's worker takes a job (the
 * admission), tells the onAdmitted listeners, and keeps the job active, its lock renewed, until
 * `release(key)`: the slot is the active job. If the replica dies its lock expires and BullMQ's stalled
 * check moves the job back to wait (never to failed), so another replica re-admits it. `isAdmitted` asks
 * Redis, so any replica can tell. `release` completes the job (removing it, so the key may be submitted
 * again) whichever replica holds it, or removes it while it waits. `close` hands this replica's slots
 * back to the queue at once, for another replica to admit.
 */
export function createRedisScheduler(opts: RedisSchedulerOptions): Scheduler {
  const { capacity, log } = opts;
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new Error(`Scheduler capacity must be a whole number of at least 1, got ${capacity}.`);
  }
  const queueName = opts.queueName ?? DEFAULT_QUEUE_NAME;
  const prefix = opts.prefix ?? "docverify";
  const lockDuration = opts.lockDurationMs ?? 30_000;
  const stalledInterval = opts.stalledIntervalMs ?? 15_000;
  const commandTimeout = opts.commandTimeoutMs ?? 10_000;
  const where = describeRedis(opts.connection);

  /** Fails `p` with a clear error when Redis does not answer in time (BullMQ waits for a connection). */
  function bounded<T>(p: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new SchedulerUnavailableError(
              `The scheduler could not ${what}: Redis at ${where} did not answer within ${commandTimeout} ms; check REDIS_URL and that Redis is running.`,
            ),
          ),
        commandTimeout,
      );
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  // Commands fail after a few reconnect attempts (the caller retries); the worker's connections wait.
  const commands = connect(opts.connection, { maxRetriesPerRequest: 5 });
  const workerConnection = connect(opts.connection, { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection: commands, prefix });
  const held = new Map<string, Held>();
  const listeners: ((key: string) => void)[] = [];
  let closed = false;

  const worker = new Worker(
    queueName,
    async (job: Job, token?: string) => {
      const key = job.id ?? "";
      // A stale entry for the same key means its job vanished (e.g. Redis lost its data) and was re-added.
      held.get(key)?.end();
      await new Promise<void>((_resolve, reject) => {
        const entry: Held = {
          job,
          token: token ?? "0",
          end: () => {
            if (held.get(key) === entry) held.delete(key);
            reject(new WaitingError());
          },
        };
        held.set(key, entry);
        notify(key);
      });
    },
    {
      connection: workerConnection,
      prefix,
      autorun: false,
      concurrency: capacity,
      lockDuration,
      stalledInterval,
      // A slot whose holder died goes back to wait, however often that happens: never to failed.
      maxStalledCount: 1_000_000_000,
      drainDelay: opts.drainDelaySeconds ?? 1,
    },
  );

  // --- health logging: one line when a connection breaks, one when it is back -------------------
  let healthy = true;
  const onConnectionError = (err: Error) => {
    if (closed) return;
    if (healthy)
      log.warn({ err: err.message, queue: queueName }, "scheduler lost its Redis connection; retrying");
    healthy = false;
  };
  commands.on("error", onConnectionError);
  workerConnection.on("error", onConnectionError);
  queue.on("error", onConnectionError);
  worker.on("error", (err) => {
    // A lock we no longer hold (released elsewhere, or Redis lost it) is handled by lockRenewalFailed.
    if (/could not renew lock/i.test(err.message)) return;
    onConnectionError(err);
  });
  commands.on("ready", () => {
    if (closed) return;
    if (!healthy) log.info({ queue: queueName }, "scheduler reconnected to Redis");
    healthy = true;
    // A Redis that restarted empty forgot the global limit: set it again on every (re)connect.
    queue.setGlobalConcurrency(capacity).catch(onConnectionError);
  });

  // A slot whose lock we could not renew is no longer ours: another replica released it, or Redis lost it.
  worker.on("lockRenewalFailed", (jobIds: string[]) => {
    for (const key of jobIds) void dropIfLost(key);
  });

  async function dropIfLost(key: string): Promise<void> {
    const entry = held.get(key);
    if (!entry) return;
    try {
      const lock = await commands.get(lockKey(key));
      if (lock === entry.token) return;
    } catch {
      return; // Redis unreachable: try again at the next renewal
    }
    if (held.get(key) !== entry) return;
    log.warn({ key, queue: queueName }, "scheduler slot lost (released elsewhere or Redis lost it)");
    entry.end();
  }

  const lockKey = (key: string) => `${queue.toKey(key)}:lock`;

  function notify(key: string): void {
    for (const l of [...listeners]) {
      queueMicrotask(() => {
        if (!closed) l(key);
      });
    }
  }

  // Start taking work once the global limit is set, so no replica ever runs without it.
  void (async () => {
    try {
      await queue.setGlobalConcurrency(capacity);
    } catch (err) {
      onConnectionError(err as Error);
    }
    if (closed) return;
    worker.run().catch((err: unknown) => {
      if (!closed) log.error({ err, queue: queueName }, "scheduler worker stopped");
    });
  })();

  /** Completes (and so removes) a job another process holds, or removes a waiting one. */
  async function releaseInRedis(key: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const state = await queue.getJobState(key);
      if (state === "unknown") return;
      try {
        if (state === "active") {
          // "0" skips the token check: the holder died and its lock expired before the stalled check ran.
          const token = (await commands.get(lockKey(key))) ?? "0";
          const job = await queue.getJob(key);
          if (!job) return;
          await job.moveToCompleted(null, token, false);
          return;
        }
        if ((await queue.remove(key)) === 1) return;
      } catch (err) {
        // The job changed state between our read and our write (admitted, stalled, finished): look again.
        if (attempt >= 5) throw err;
        continue;
      }
      if (attempt >= 5) {
        throw new Error(`Could not release scheduler key ${key}: it kept changing state; try again.`);
      }
    }
  }

  return {
    async submit(key, priority) {
      if (closed) throw new Error("The scheduler is closed; the service is shutting down.");
      const rank = BULLMQ_PRIORITY[priority];
      if (rank === undefined) {
        throw new Error(`Unknown priority ${JSON.stringify(priority)}; use one of ${PRIORITIES.join(", ")}.`);
      }
      checkKey(key);
      // A job with this id already waiting or active makes BullMQ ignore the add: exactly once.
      await bounded(
        queue.add(
          "admit",
          { key, priority },
          { jobId: key, priority: rank, removeOnComplete: true, removeOnFail: true, attempts: 1 },
        ),
        `queue ${key}`,
      );
    },

    async isAdmitted(key) {
      if (closed) return false;
      checkKey(key);
      return (await bounded(queue.getJobState(key), `look up ${key}`)) === "active";
    },

    async release(key) {
      if (closed) return;
      checkKey(key);
      const entry = held.get(key);
      if (entry) {
        held.delete(key);
        try {
          await bounded(entry.job.moveToCompleted(null, entry.token, false), `release ${key}`);
          return;
        } catch {
          // Our lock was lost meanwhile (stalled, or Redis restarted): settle it through Redis below.
        } finally {
          entry.end();
        }
      }
      await bounded(releaseInRedis(key), `release ${key}`);
    },

    onAdmitted(listener) {
      listeners.push(listener);
    },

    async stats() {
      const c = await bounded(
        queue.getJobCounts("waiting", "prioritized", "delayed", "active"),
        "count its jobs",
      );
      const waiting = (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
      return { waiting, admitted: c.active ?? 0, capacity };
    },

    async close() {
      if (closed) return;
      closed = true;
      const closing = worker.close();
      // Hand our slots back at once (not after the lock expires): another replica admits them.
      for (const entry of [...held.values()]) {
        await bounded(entry.job.moveToWait(entry.token), `hand ${entry.job.id} back`).catch(
          (err: unknown) => {
            log.warn(
              { err: (err as Error).message, key: entry.job.id },
              "could not hand a scheduler slot back; it returns to the queue when its lock expires",
            );
          },
        );
        entry.end();
      }
      held.clear();
      // Bounded: with Redis unreachable, BullMQ would wait for it forever.
      await bounded(closing, "stop its worker").catch(() => undefined);
      await bounded(queue.close(), "close its queue").catch(() => undefined);
      await bounded(
        Promise.all([commands.quit().catch(() => undefined), workerConnection.quit().catch(() => undefined)]),
        "disconnect",
      ).catch(() => undefined);
      commands.disconnect();
      workerConnection.disconnect();
    },
  };
}
