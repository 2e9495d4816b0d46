import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWindowCounterContract } from "../testdata/window-counter-contract.js";
import { type RedisServer, redisServerAvailable, startRedisServer } from "./testdata/redis-server.js";
import { createRedisWindowCounter } from "./window-counter.js";

const availability = redisServerAvailable();

describe.skipIf(!availability.ok)(
  `Redis window counter${availability.ok ? "" : ` (skipped: ${availability.reason})`}`,
  () => {
    let redis: RedisServer;
    const opened: { close(): Promise<void> }[] = [];
    const open = (prefix = "t:") => {
      const c = createRedisWindowCounter({ connection: redis.url, prefix });
      opened.push(c);
      return c;
    };
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await Promise.all(opened.map((c) => c.close()));
      await redis?.stop();
    });

    describeWindowCounterContract("redis", async () => {
      const counter = open();
      return {
        counter,
        replicas: [counter, open(), open()],
        // The TTL was set before the hit answered, and Redis expires a key on access once its TTL has
        // passed: after `ms` (plus a margin for the two clocks' rounding) the window reads as closed.
        pass: (ms) => new Promise((r) => setTimeout(r, ms + 20)),
      };
    });

    it("keeps counters of different prefixes apart", async () => {
      const a = open("a:");
      const b = open("b:");
      await a.hit("k", 60_000);
      expect((await b.peek("k")).count).toBe(0);
      expect((await a.peek("k")).count).toBe(1);
    });

    it("fails (so callers can fail open) within its command timeout when Redis is gone", async () => {
      const other = await startRedisServer();
      const c = createRedisWindowCounter({ connection: other.url, commandTimeoutMs: 300 });
      try {
        expect((await c.hit("k", 60_000)).count).toBe(1);
        await other.stop();
        await expect(c.hit("k", 60_000)).rejects.toThrow();
      } finally {
        await c.close();
        await other.stop();
      }
    });
  },
);
