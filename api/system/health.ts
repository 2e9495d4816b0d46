import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import type { AppEnv } from "../deps.js";
import { jsonResponse, PUBLIC } from "../schema.js";

const Health = z.object({ status: z.string().openapi({ example: "ok" }), reason: z.string().optional() });

export const healthzRoute = createRoute({
  method: "get",
  path: "/healthz",
  tags: ["operations"],
  summary: "Liveness: the process answers",
  operationId: "getHealth",
  security: PUBLIC,
  responses: { 200: jsonResponse(Health, "Alive") },
});

export const readyzRoute = createRoute({
  method: "get",
  path: "/readyz",
  tags: ["operations"],
  summary: "Readiness: the service's dependencies answer",
  operationId: "getReadiness",
  security: PUBLIC,
  responses: {
    200: jsonResponse(Health, "Ready"),
    503: jsonResponse(Health, "Not ready; `reason` says why"),
  },
});

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(healthzRoute, (c) => c.json({ status: "ok" }, 200));
  app.openapi(readyzRoute, async (c) => {
    let result: { ok: boolean; reason?: string };
    try {
      result = await c.var.deps.ready();
    } catch (err) {
      result = { ok: false, reason: `Readiness check failed: ${(err as Error).message}` };
    }
    c.header("Cache-Control", "no-store");
    return result.ok
      ? c.json({ status: "ok" }, 200)
      : c.json({ status: "unavailable", reason: result.reason ?? "A dependency is not ready." }, 503);
  });
}
