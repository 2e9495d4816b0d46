import type { Hono, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { Counter, Histogram, type Registry } from "prom-client";
import type { AppEnv } from "../deps.js";

const REQUESTS = "docverify_http_requests_total";
const DURATION = "docverify_http_request_duration_seconds";

function counter(registry: Registry): Counter<"route" | "method" | "status"> {
  const existing = registry.getSingleMetric(REQUESTS);
  if (existing) return existing as Counter<"route" | "method" | "status">;
  return new Counter({
    name: REQUESTS,
    help: "HTTP requests answered, by route pattern, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
}

function histogram(registry: Registry): Histogram<"route" | "method"> {
  const existing = registry.getSingleMetric(DURATION);
  if (existing) return existing as Histogram<"route" | "method">;
  return new Histogram({
    name: DURATION,
    help: "HTTP request latency in seconds, by route pattern and method.",
    labelNames: ["route", "method"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
}

/** The route pattern that answered (e.g. /v1/detection/:detection_id), or "unmatched": bounded label values. */
function routeLabel(c: Parameters<MiddlewareHandler>[0]): string {
  const routes = matchedRoutes(c).filter((r) => r.method !== "ALL");
  return routes.at(-1)?.path ?? "unmatched";
}

/** Counts every request and observes its latency (answers from onError included). */
export function httpMetrics(registry: Registry): MiddlewareHandler<AppEnv> {
  const requests = counter(registry);
  const latency = histogram(registry);
  return async (c, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const route = routeLabel(c);
      const method = c.req.method;
      requests.inc({ route, method, status: String(c.res.status) });
      latency.observe({ route, method }, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
}

export function registerMetricsRoute(app: Hono<AppEnv>, registry: Registry): void {
  app.get("/metrics", async (c) => {
    const text = await registry.metrics();
    return c.body(text, 200, { "Content-Type": registry.contentType });
  });
}
