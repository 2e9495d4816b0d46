import { PRIORITIES, type Priority } from "../../core/detection.js";
import type { Scheduler } from "../../core/ports.js";

/**
 * The standalone scheduler: an in-process priority queue with at most `capacity` keys admitted at once.
 * interactive > batch > sample, FIFO within a priority. onAdmitted listeners run in a later microtask,
 * never inside submit's or release's stack. Nothing is persisted: after a restart the reconciler submits
 * every unfinished detection again.
 */
export function createLocalScheduler(opts: { capacity: number }): Scheduler {
  const { capacity } = opts;
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new Error(`Scheduler capacity must be a whole number of at least 1, got ${capacity}.`);
  }
  /** One FIFO per priority, in admission order of the priorities. */
  const waiting = new Map<Priority, Set<string>>(PRIORITIES.map((p) => [p, new Set<string>()]));
  const admitted = new Set<string>();
  const listeners: ((key: string) => void)[] = [];
  let closed = false;

  const isWaiting = (key: string) => [...waiting.values()].some((q) => q.has(key));
  const waitingCount = () => [...waiting.values()].reduce((n, q) => n + q.size, 0);

  function notify(key: string): void {
    // One microtask per listener, so a listener that throws cannot keep the others from hearing.
    for (const l of [...listeners]) {
      queueMicrotask(() => {
        if (!closed) l(key);
      });
    }
  }

  function admitWhileRoom(): void {
    for (const priority of PRIORITIES) {
      const queue = waiting.get(priority)!;
      for (const key of queue) {
        if (admitted.size >= capacity) return;
        queue.delete(key);
        admitted.add(key);
        notify(key);
      }
    }
  }

  function assertOpen(): void {
    if (closed) throw new Error("The scheduler is closed; the service is shutting down.");
  }

  return {
    async submit(key, priority) {
      assertOpen();
      const queue = waiting.get(priority);
      if (!queue)
        throw new Error(`Unknown priority ${JSON.stringify(priority)}; use one of ${PRIORITIES.join(", ")}.`);
      if (admitted.has(key) || isWaiting(key)) return;
      queue.add(key);
      admitWhileRoom();
    },
    async isAdmitted(key) {
      return admitted.has(key);
    },
    async release(key) {
      if (closed) return;
      if (admitted.delete(key)) admitWhileRoom();
      else for (const q of waiting.values()) q.delete(key);
    },
    onAdmitted(listener) {
      listeners.push(listener);
    },
    async stats() {
      return { waiting: waitingCount(), admitted: admitted.size, capacity };
    },
    async close() {
      closed = true;
      for (const q of waiting.values()) q.clear();
      admitted.clear();
    },
  };
}
