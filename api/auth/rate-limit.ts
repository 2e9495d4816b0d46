import type { MiddlewareHandler } from "hono";
import type { Clock } from "../../core/ports.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";

/**
 * Per-client fixed-window rate limit: at most `perMinute` requests per client_id in each clock minute.
 * Runs after authentication (it keys on the token's client). In memory: each API replica counts its own.
 */
export function rateLimit(perMinute: number, clock: Clock): MiddlewareHandler<AppEnv> {
  const windows = new Map<string, { start: number; count: number }>();
  return async (c, next) => {
    const now = clock.now().getTime();
    const start = now - (now % 60_000);
    const clientId = c.var.principal.clientId;
    let w = windows.get(clientId);
    if (!w || w.start !== start) {
      if (windows.size > 10_000) {
        for (const [id, old] of windows) if (old.start !== start) windows.delete(id);
      }
      w = { start, count: 0 };
      windows.set(clientId, w);
    }
    if (w.count >= perMinute) {
      const retryAfter = Math.max(1, Math.ceil((start + 60_000 - now) / 1000));
      throw new ApiError(
        429,
        "rate_limited",
        `Rate limit of ${perMinute} requests per minute exceeded for this client; retry after ${retryAfter} seconds.`,
        { headers: { "Retry-After": String(retryAfter) } },
      );
    }
    w.count++;
    await next();
  };
}
