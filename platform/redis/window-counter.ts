import { Redis, type RedisOptions } from "ioredis";
import type { WindowCount, WindowCounter } from "../../core/window-counter.js";

export interface RedisWindowCounterOptions {
  /** A `redis://` / `rediss://` URL or ioredis options. */
  connection: string | RedisOptions;
  /** Key prefix; counters live at `<prefix>window:<key>`. */
  prefix?: string;
  /**
   * A command that has no answer within this many milliseconds fails (default 1000), so a Redis outage
   * costs a caller at most that long; the callers fail open.
   */
  commandTimeoutMs?: number;
}

/**
 * One hit: INCR, and a TTL of ARGV[1] ms when the key has none (a new window, or a key some other writer
 * left without one). Answers { count, ms left }. A script runs alone on the server: no hit interleaves.
 */
const HIT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
`;
/** { count, ms left } without changing anything; {0, 0} for a missing key. */
const PEEK = `
local v = redis.call('GET', KEYS[1])
if not v then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(v), ttl}
`;

type CounterRedis = Redis & {
  docverifyWindowHit(key: string, windowMs: number): Promise<[number, number]>;
  docverifyWindowPeek(key: string): Promise<[number, number]>;
};

/**
 * WindowCounter on Redis, shared by every api replica: one key per counter whose TTL is the window, so
 * the window's clock is Redis's (replicas' clocks may differ) and closed windows cost no memory.
 */
export function createRedisWindowCounter(
  opts: RedisWindowCounterOptions,
): WindowCounter & { close(): Promise<void> } {
  const extra: RedisOptions = {
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs ?? 1000,
  };
  const redis = (
    typeof opts.connection === "string"
      ? new Redis(opts.connection, extra)
      : new Redis({ ...opts.connection, ...extra })
  ) as CounterRedis;
  redis.defineCommand("docverifyWindowHit", { numberOfKeys: 1, lua: HIT });
  redis.defineCommand("docverifyWindowPeek", { numberOfKeys: 1, lua: PEEK });
  // Errors reach the callers of each command; an idle connection's errors must not crash the process.
  redis.on("error", () => {});
  const prefix = opts.prefix ?? "docverify:";
  const full = (key: string) => `${prefix}window:${key}`;
  const answer = ([count, ttl]: [number, number]): WindowCount => ({
    count: Number(count),
    resetInMs: Math.max(0, Number(ttl)),
  });

  return {
    async hit(key, windowMs) {
      return answer(await redis.docverifyWindowHit(full(key), Math.max(1, Math.ceil(windowMs))));
    },
    async peek(key) {
      return answer(await redis.docverifyWindowPeek(full(key)));
    },
    async clear(key) {
      await redis.del(full(key));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
