import { randomUUID } from "node:crypto";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { authenticate } from "./auth/middleware.js";
import { rateLimit } from "./auth/rate-limit.js";
import type { ApiDeps, AppEnv } from "./deps.js";
import { registerDetectionRoutes } from "./detections/index.js";
import { errorHandler } from "./error-handler.js";
import { registerJobRoutes } from "./jobs/index.js";
import { registerDocsRoutes } from "./system/docs.js";
import { registerHealthRoutes } from "./system/health.js";
import { httpMetrics, registerMetricsRoute } from "./system/metrics.js";
import { notFoundHandler } from "./system/not-found.js";
import { registerPostToken } from "./token/post.js";
import { registerUploadRoutes } from "./uploads/index.js";
import { validationHook } from "./validation.js";

export const API_VERSION = "1.0.0";
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Puts the ports on the context, gives every request an id (a valid incoming x-request-id is kept and
 * echoed) and logs one debug line per request.
 */
function requestContext(deps: ApiDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    c.set("deps", deps);
    c.set("requestId", requestId);
    c.header("X-Request-Id", requestId);
    const start = performance.now();
    await next();
    c.res.headers.set("X-Request-Id", requestId);
    deps.log.debug(
      {
        requestId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: performance.now() - start,
      },
      "request",
    );
  };
}

/** Builds the REST API from its ports. bin/ serves it; tests drive it with app.request(). */
export function createApp(deps: ApiDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });

  app.use("*", requestContext(deps));
  app.use("*", httpMetrics(deps.metrics));
  // Every operation but /token, the signed upload PUT and the system routes needs a bearer token.
  const bearerPaths = ["/v1/*", "/jobs/*"]; // "/jobs/*" matches "/jobs" too
  for (const p of bearerPaths) app.use(p, authenticate);
  if (deps.config.rateLimitPerMinute !== undefined) {
    const limit = rateLimit(deps.config.rateLimitPerMinute, deps.clock);
    for (const p of bearerPaths) app.use(p, limit);
  }

  registerPostToken(app);
  registerDetectionRoutes(app);
  registerUploadRoutes(app);
  registerJobRoutes(app);
  registerHealthRoutes(app);
  registerMetricsRoute(app, deps.metrics);
  registerDocsRoutes(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An access token from POST /token (OAuth 2.0 client_credentials).",
  });
  app.doc("/openapi.json", {
    openapi: "3.0.3",
    info: {
      title: "docverify — document verification service",
      version: API_VERSION,
      description:
        "Assesses fraud risk in financial and identity documents. Detection is asynchronous: create a detection " +
        "(202, QUEUED), then poll it until COMPLETED or FAILED. Every /v1 operation needs a bearer token.",
    },
    servers: [{ url: deps.publicUrl.replace(/\/+$/, "") }],
  });

  app.notFound(notFoundHandler(app));
  app.onError(errorHandler);
  return app;
}
