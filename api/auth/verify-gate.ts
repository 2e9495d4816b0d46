/**
 * Bounded concurrency for client-secret verification. scrypt costs ~50-100 ms of a CPU and 32 MiB per
 * check, so the number running at once is capped (`concurrency`); the rest wait in two lanes:
 * - the priority lane: callers that authenticated from the same address recently (a known pair), FIFO,
 *   with `reserved` extra slots of their own (default 1): a known client never waits for a stranger's
 *   check to end, it only shares the CPU with it;
 * - the normal lane: everyone else, served round-robin by source address, so a source with many
 *   connections gets no more turns than a source with one.
 * A source may have at most `maxPerSource` checks queued or running, and the normal lane at most
 * `maxQueued` waiting; past either the call is refused at once (GateBusyError) instead of queueing
 * without bound. The priority lane goes first whenever a slot frees.
 */
export class GateBusyError extends Error {
  override name = "GateBusyError";
}

export interface VerifyGateOptions {
  concurrency: number;
  /** Slots beyond `concurrency` only the priority lane may use (default 1). */
  reserved?: number;
  /** Most checks one source may have queued or running (default 64). */
  maxPerSource?: number;
  /** Most checks waiting in the normal lane (default 1024). */
  maxQueued?: number;
}

export interface VerifyGate {
  /** Runs `fn` when a slot is free; throws GateBusyError when the source or the queue is full. */
  run<T>(caller: { source: string; priority: boolean }, fn: () => Promise<T>): Promise<T>;
  stats(): { running: number; queued: number };
}

interface Waiter {
  source: string;
  start: () => void;
}

export function createVerifyGate(opts: VerifyGateOptions): VerifyGate {
  const concurrency = Math.max(1, opts.concurrency);
  const maxPerSource = Math.max(1, opts.maxPerSource ?? 64);
  const maxQueued = Math.max(0, opts.maxQueued ?? 1024);
  const reserved = Math.max(0, opts.reserved ?? 1);
  const canStart = (priority: boolean) => running < concurrency + (priority ? reserved : 0);
  let running = 0;
  let queuedNormal = 0;
  const priority: Waiter[] = [];
  /** Insertion order is the round-robin order: a served source moves to the end. */
  const normal = new Map<string, Waiter[]>();
  const pending = new Map<string, number>();

  /** The next waiter that may start now, taken off its lane. */
  function next(): Waiter | undefined {
    if (priority.length > 0 && canStart(true)) return priority.shift();
    if (!canStart(false)) return undefined;
    for (const [source, queue] of normal) {
      const w = queue.shift();
      normal.delete(source);
      if (queue.length > 0) normal.set(source, queue);
      queuedNormal--;
      return w;
    }
    return undefined;
  }

  function release(source: string): void {
    const left = (pending.get(source) ?? 1) - 1;
    if (left <= 0) pending.delete(source);
    else pending.set(source, left);
    running--;
    for (let w = next(); w; w = next()) {
      running++;
      w.start();
    }
  }

  return {
    async run(caller, fn) {
      const mine = pending.get(caller.source) ?? 0;
      if (mine >= maxPerSource) {
        throw new GateBusyError(`More than ${maxPerSource} authentications at once from one address.`);
      }
      const laneEmpty = caller.priority ? priority.length === 0 : queuedNormal === 0;
      if (!(canStart(caller.priority) && laneEmpty)) {
        if (!caller.priority && queuedNormal >= maxQueued) {
          throw new GateBusyError("Too many authentications are waiting.");
        }
        pending.set(caller.source, mine + 1);
        await new Promise<void>((start) => {
          const w = { source: caller.source, start };
          if (caller.priority) priority.push(w);
          else {
            const q = normal.get(caller.source);
            if (q) q.push(w);
            else normal.set(caller.source, [w]);
            queuedNormal++;
          }
        });
      } else {
        pending.set(caller.source, mine + 1);
        running++;
      }
      try {
        return await fn();
      } finally {
        release(caller.source);
      }
    },
    stats: () => ({ running, queued: queuedNormal + priority.length }),
  };
}
