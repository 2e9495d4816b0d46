import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../core/step-context.js";
import type { WindowCounter } from "../../core/window-counter.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";

const WINDOW_MS = 60_000;

/**
 * Per-client fixed-window rate limit: at most `perMinute` requests per client_id in each window of one
 * minute, which opens at the client's first request after the previous one closed. Runs after
 * authentication (it keys on the token's client). Counted on the WindowCounter port, so in the cluster
 * every api replica shares one count (Redis). When the counter backend fails, requests pass (fail open:
 * the limit protects capacity, it is not needed to serve) and the failure is logged at most every 30 s.
 */
export function rateLimit(
  perMinute: number,
  counter: WindowCounter,
  log: Logger,
  onCounterError?: () => void,
): MiddlewareHandler<AppEnv> {
  let lastLogged = 0;
  return async (c, next) => {
    let window: { count: number; resetInMs: number };
    try {
      window = await counter.hit(`rate:${c.var.principal.clientId}`, WINDOW_MS);
    } catch (err) {
      onCounterError?.();
      if (Date.now() - lastLogged > 30_000) {
        lastLogged = Date.now();
        log.error(
          { err },
          "the rate-limit counters are unavailable; requests are not rate-limited meanwhile",
        );
      }
      await next();
      return;
    }
    if (window.count > perMinute) {
      const retryAfter = Math.max(1, Math.ceil(window.resetInMs / 1000));
      throw new ApiError(
        429,
        "rate_limited",
        `Rate limit of ${perMinute} requests per minute exceeded for this client; retry after ${retryAfter} seconds.`,
        { headers: { "Retry-After": String(retryAfter) } },
      );
    }
    await next();
  };
}
