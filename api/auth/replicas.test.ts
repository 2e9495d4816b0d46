/**
 * Two api replicas (two apps) over one real Redis, as in the cluster: the per-client rate limit and the
 * /token throttling count across both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../core/config.js";
import {
  type RedisServer,
  redisServerAvailable,
  startRedisServer,
} from "../../platform/redis/testdata/redis-server.js";
import { createRedisWindowCounter } from "../../platform/redis/window-counter.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";

const availability = redisServerAvailable();

describe.skipIf(!availability.ok)(
  `api replicas sharing Redis counters${availability.ok ? "" : ` (skipped: ${availability.reason})`}`,
  () => {
    let redis: RedisServer;
    const closers: (() => Promise<unknown>)[] = [];
    beforeAll(async () => {
      redis = await startRedisServer();
    });
    afterAll(async () => {
      for (const close of closers) await close();
      await redis?.stop();
    });

    /** Two replicas on one Redis key space (`prefix` keeps tests apart). */
    async function replicas(prefix: string, config: Partial<Config> = {}) {
      const out: Harness[] = [];
      for (let i = 0; i < 2; i++) {
        const counters = createRedisWindowCounter({ connection: redis.url, prefix });
        const h = await createHarness({ config, counters });
        closers.push(
          () => counters.close(),
          () => h.close(),
        );
        out.push(h);
      }
      return out as [Harness, Harness];
    }

    it("holds the per-client rate limit across replicas (429 + Retry-After)", async () => {
      const [a, b] = await replicas("rl:", { rateLimitPerMinute: 4 });
      const alice = await a.token("alice");
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const replica = i % 2 === 0 ? a : b;
        statuses.push((await call(replica, "GET", "/v1/detection", { token: alice })).status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      const over = await call(b, "GET", "/v1/detection", { token: alice });
      const retry = Number(over.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect((await call(a, "GET", "/v1/detection", { token: await a.token("bob") })).status).toBe(200);
    });

    it("counts failed authentications across replicas", async () => {
      const [a, b] = await replicas("tk:");
      const from = (h: Harness, client_id: string, client_secret: string) =>
        h.app.request(
          "/token",
          {
            method: "POST",
            body: new URLSearchParams({ grant_type: "client_credentials", client_id, client_secret }),
          },
          { incoming: { socket: { remoteAddress: "198.51.100.77" } } },
        );
      const shared = createRedisWindowCounter({ connection: redis.url, prefix: "tk:" });
      closers.push(() => shared.close());
      for (let i = 0; i < 10; i++) expect((await from(i % 2 ? a : b, `guess-${i}`, "x")).status).toBe(401);
      const tenth = Date.now();
      const answers = [await from(a, "bob", "bob-secret"), await from(b, "bob", "bob-secret")];
      // Each replica's five failures went into one count, which blocked the address on both replicas for
      // 1 s (unless this machine took longer than that between the requests: then the block has passed).
      const { count } = await shared.peek("token:fail:a:198.51.100.77");
      expect(count).toBe(10);
      if (Date.now() - tenth < 900) {
        for (const res of answers) {
          expect(res.status).toBe(429);
          expect(res.headers.get("retry-after")).toBe("1");
        }
      }
    });
  },
);
