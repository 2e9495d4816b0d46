import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, redisServerAvailable, startRedisServer } from "./testdata/redis-server.js";
import { createRedisUsageCounter } from "./usage-counter.js";

const availability = redisServerAvailable();

describe.skipIf(!availability.ok)(
  `Redis usage counter${availability.ok ? "" : ` (skipped: ${availability.reason})`}`,
  () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it("consumes up to the limit and no further, per client and kind", async () => {
      const c = createRedisUsageCounter({ connection: redis.url, prefix: "t1:" });
      try {
        expect(await c.tryConsume("acme", "sample", 2)).toBe(true);
        expect(await c.tryConsume("acme", "sample", 2)).toBe(true);
        expect(await c.tryConsume("acme", "sample", 2)).toBe(false);
        expect(await c.used("acme", "sample")).toBe(2);
        expect(await c.tryConsume("other", "sample", 2)).toBe(true);
        expect(await c.used("acme", "other-kind")).toBe(0);
        expect(await c.tryConsume("acme", "sample", 0)).toBe(false);
      } finally {
        await c.close();
      }
    });

    it("holds the limit under concurrent calls from several connections (replicas)", async () => {
      const replicas = [1, 2, 3].map(() => createRedisUsageCounter({ connection: redis.url, prefix: "t2:" }));
      try {
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) => replicas[i % 3]!.tryConsume("acme", "sample", 7)),
        );
        expect(results.filter(Boolean)).toHaveLength(7);
        expect(await replicas[0]!.used("acme", "sample")).toBe(7);
      } finally {
        await Promise.all(replicas.map((r) => r.close()));
      }
    });

    it("refund gives one unit back and never goes below zero", async () => {
      const c = createRedisUsageCounter({ connection: redis.url, prefix: "t3:" });
      try {
        await c.refund("acme", "sample");
        expect(await c.used("acme", "sample")).toBe(0);
        expect(await c.tryConsume("acme", "sample", 1)).toBe(true);
        expect(await c.tryConsume("acme", "sample", 1)).toBe(false);
        await c.refund("acme", "sample");
        expect(await c.used("acme", "sample")).toBe(0);
        expect(await c.tryConsume("acme", "sample", 1)).toBe(true);
      } finally {
        await c.close();
      }
    });
  },
);
