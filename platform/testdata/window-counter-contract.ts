/**
 * The behaviour every WindowCounter adapter must share (in memory, Redis), as one parametrised vitest
 * suite: `describeWindowCounterContract("local", make)` in each adapter's test file.
 */
import { describe, expect, it } from "vitest";
import type { WindowCounter } from "../../core/window-counter.js";

export interface ContractCounter {
  counter: WindowCounter;
  /** Returns once a window of `windowMs` opened now has closed (a manual clock advances; Redis waits). */
  pass(windowMs: number): Promise<void>;
  /** Further holders of the same counters (other API replicas); the counter itself when there are none. */
  replicas: WindowCounter[];
}

let seq = 0;
/** A key no other test of the run uses. */
const fresh = (name: string) => `${name}-${process.pid}-${Date.now()}-${++seq}`;

export function describeWindowCounterContract(name: string, make: () => Promise<ContractCounter>): void {
  describe(`window counter contract: ${name}`, () => {
    it("counts hits in one window and says how long it has left", async () => {
      const { counter } = await make();
      const key = fresh("count");
      expect(await counter.peek(key)).toEqual({ count: 0, resetInMs: 0 });
      const first = await counter.hit(key, 60_000);
      expect(first.count).toBe(1);
      expect(first.resetInMs).toBeGreaterThan(50_000);
      expect(first.resetInMs).toBeLessThanOrEqual(60_000);
      expect((await counter.hit(key, 60_000)).count).toBe(2);
      // A later hit with another window does not move the open window's end.
      const third = await counter.hit(key, 5_000_000);
      expect(third.count).toBe(3);
      expect(third.resetInMs).toBeLessThanOrEqual(60_000);
      const peeked = await counter.peek(key);
      expect(peeked.count).toBe(3);
      expect(peeked.resetInMs).toBeGreaterThan(0);
      expect(await counter.peek(fresh("other"))).toEqual({ count: 0, resetInMs: 0 });
    });

    it("starts a new window once the old one has passed", async () => {
      const { counter, pass } = await make();
      const key = fresh("expire");
      await counter.hit(key, 300);
      await counter.hit(key, 300);
      await pass(300);
      expect((await counter.peek(key)).count).toBe(0);
      const again = await counter.hit(key, 60_000);
      expect(again.count).toBe(1);
      expect(again.resetInMs).toBeGreaterThan(50_000);
    });

    it("clear closes the window at once", async () => {
      const { counter } = await make();
      const key = fresh("clear");
      await counter.hit(key, 60_000);
      await counter.hit(key, 60_000);
      await counter.clear(key);
      expect(await counter.peek(key)).toEqual({ count: 0, resetInMs: 0 });
      expect((await counter.hit(key, 60_000)).count).toBe(1);
      await counter.clear(fresh("never-hit"));
    });

    it("is atomic: concurrent hits from every replica each get a distinct count", async () => {
      const { replicas } = await make();
      const key = fresh("atomic");
      const counts = await Promise.all(
        Array.from({ length: 60 }, (_, i) => replicas[i % replicas.length]!.hit(key, 60_000)),
      );
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
      for (const r of replicas) expect((await r.peek(key)).count).toBe(60);
    });
  });
}
