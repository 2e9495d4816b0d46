/**
 * Bounded concurrency for client-secret verification. scrypt costs ~50-100 ms of a CPU and 32 MiB per
 * check, so the number running at once is capped (`concurrency`); the rest wait in three lanes, served in
 * this order whenever a slot frees:
 * - `known`: callers that authenticated from the same address recently (a known pair), FIFO, with
 *   `reserved` extra slots of their own (default 1): a known client never waits for a stranger's check to
 *   end, it only shares the CPU with it;
 * - `clean`: callers whose address has no failed authentication in the current window (a new client);
 * - `suspect`: callers whose address failed recently (guessers, and whoever shares their address).
 * Within `clean` and `suspect`, sources are served round-robin, so a source with many connections gets no
 * more turns than a source with one.
 * A source may have at most `maxPerSource` checks queued or running, and the clean and suspect lanes at
 * most `maxQueued` waiting together; past either the call is refused at once (GateBusyError) instead of
 * queueing without bound.
 */
export class GateBusyError extends Error {
  override name = "GateBusyError";
}

export type GateLane = "known" | "clean" | "suspect";

export interface VerifyGateOptions {
  concurrency: number;
  /** Slots beyond `concurrency` only the known lane may use (default 1). */
  reserved?: number;
  /** Most checks one source may have queued or running (default 64). */
  maxPerSource?: number;
  /** Most checks waiting in the clean and suspect lanes together (default 1024). */
  maxQueued?: number;
}

export interface VerifyGate {
  /** Runs `fn` when a slot is free; throws GateBusyError when the source or the queue is full. */
  run<T>(caller: { source: string; lane: GateLane }, fn: () => Promise<T>): Promise<T>;
  stats(): { running: number; queued: number };
}

interface Waiter {
  source: string;
  start: () => void;
}

/** A lane served round-robin by source: insertion order of the map is the turn order. */
class RoundRobin {
  private readonly bySource = new Map<string, Waiter[]>();
  size = 0;
  push(w: Waiter): void {
    const q = this.bySource.get(w.source);
    if (q) q.push(w);
    else this.bySource.set(w.source, [w]);
    this.size++;
  }
  /** The first waiting source's oldest waiter; that source then goes to the end of the turn order. */
  shift(): Waiter | undefined {
    for (const [source, queue] of this.bySource) {
      const w = queue.shift();
      this.bySource.delete(source);
      if (queue.length > 0) this.bySource.set(source, queue);
      this.size--;
      return w;
    }
    return undefined;
  }
}

export function createVerifyGate(opts: VerifyGateOptions): VerifyGate {
  const concurrency = Math.max(1, opts.concurrency);
  const maxPerSource = Math.max(1, opts.maxPerSource ?? 64);
  const maxQueued = Math.max(0, opts.maxQueued ?? 1024);
  const reserved = Math.max(0, opts.reserved ?? 1);
  let running = 0;
  const known: Waiter[] = [];
  const clean = new RoundRobin();
  const suspect = new RoundRobin();
  const pending = new Map<string, number>();
  const canStart = (lane: GateLane) => running < concurrency + (lane === "known" ? reserved : 0);
  /** No waiter of `lane` or of a lane served before it: a new caller of `lane` need not queue. */
  const nothingAhead = (lane: GateLane) =>
    known.length === 0 &&
    (lane === "known" || (clean.size === 0 && (lane === "clean" || suspect.size === 0)));

  /** The next waiter that may start now, taken off its lane. */
  function next(): Waiter | undefined {
    if (known.length > 0 && canStart("known")) return known.shift();
    if (!canStart("clean")) return undefined;
    return clean.shift() ?? suspect.shift();
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
      if (canStart(caller.lane) && nothingAhead(caller.lane)) {
        pending.set(caller.source, mine + 1);
        running++;
      } else {
        if (caller.lane !== "known" && clean.size + suspect.size >= maxQueued) {
          throw new GateBusyError("Too many authentications are waiting.");
        }
        pending.set(caller.source, mine + 1);
        await new Promise<void>((start) => {
          const w = { source: caller.source, start };
          if (caller.lane === "known") known.push(w);
          else (caller.lane === "clean" ? clean : suspect).push(w);
        });
      }
      try {
        return await fn();
      } finally {
        release(caller.source);
      }
    },
    stats: () => ({ running, queued: known.length + clean.size + suspect.size }),
  };
}
