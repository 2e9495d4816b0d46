import { Redis, type RedisOptions } from "ioredis";
import type { UsageCounter } from "../../core/usage-counter.js";

export interface RedisUsageCounterOptions {
  /** A `redis://` / `rediss://` URL or ioredis options. */
  connection: string | RedisOptions;
  /** Key prefix; counters live at `<prefix>usage:<kind>:<client id>`. */
  prefix?: string;
}

/** Adds one when below the limit, in one step on the server (no other call can interleave). */
const TRY_CONSUME = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used < tonumber(ARGV[1]) then
  redis.call('INCR', KEYS[1])
  return 1
end
return 0
`;
/** Takes one back, never below zero. */
const REFUND = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then
  redis.call('DECR', KEYS[1])
end
return 0
`;

type CounterRedis = Redis & {
  docverifyTryConsume(key: string, limit: number): Promise<number>;
  docverifyRefund(key: string): Promise<number>;
};

/**
 * UsageCounter on Redis, shared by every api replica: each counter is one key, changed only by Lua
 * scripts, so a limit holds under any concurrency. The counters are lifetime allowances: run Redis with
 * persistence (AOF or RDB) so a Redis restart does not reset them.
 */
export function createRedisUsageCounter(
  opts: RedisUsageCounterOptions,
): UsageCounter & { close(): Promise<void> } {
  const extra: RedisOptions = { lazyConnect: false, maxRetriesPerRequest: 3 };
  const redis = (
    typeof opts.connection === "string"
      ? new Redis(opts.connection, extra)
      : new Redis({ ...opts.connection, ...extra })
  ) as CounterRedis;
  redis.defineCommand("docverifyTryConsume", { numberOfKeys: 1, lua: TRY_CONSUME });
  redis.defineCommand("docverifyRefund", { numberOfKeys: 1, lua: REFUND });
  // Errors reach the callers of each command; an idle connection's errors must not crash the process.
  redis.on("error", () => {});
  const prefix = opts.prefix ?? "docverify:";
  const key = (clientId: string, kind: string) => `${prefix}usage:${kind}:${clientId}`;

  return {
    async tryConsume(clientId, kind, limit) {
      if (limit <= 0) return false;
      return (await redis.docverifyTryConsume(key(clientId, kind), limit)) === 1;
    },
    async refund(clientId, kind) {
      await redis.docverifyRefund(key(clientId, kind));
    },
    async used(clientId, kind) {
      return Number((await redis.get(key(clientId, kind))) ?? 0);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
