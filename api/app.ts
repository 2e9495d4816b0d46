import { randomUUID } from "node:crypto";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { authMetrics } from "./auth/auth-metrics.js";
import { authenticate } from "./auth/middleware.js";
import { rateLimit } from "./auth/rate-limit.js";
import { createTokenThrottle, DEFAULT_KNOWN_SECONDS } from "./auth/token-throttle.js";
import { createVerifyGate } from "./auth/verify-gate.js";
import type { ApiDeps, AppEnv } from "./deps.js";
import { registerDetectionRoutes } from "./detections/index.js";
import { errorHandler } from "./error-handler.js";
import { registerJobRoutes } from "./jobs/index.js";
import { registerReviewRoutes } from "./review/index.js";
import { registerDocsRoutes } from "./system/docs.js";
import { registerHealthRoutes } from "./system/health.js";
import { registerJwksRoute } from "./system/jwks.js";
import { httpMetrics, registerMetricsRoute } from "./system/metrics.js";
import { notFoundHandler } from "./system/not-found.js";
import { registerPostToken } from "./token/post.js";
import { bearer, normalizeOpenApi, SECURITY_SCHEMES } from "./schema.js";
import { registerUploadRoutes } from "./uploads/index.js";
import { registerWebhookRoutes } from "./webhooks/index.js";
import { createUploadLocks } from "./uploads/reservation.js";
import { validationHook } from "./validation.js";

export const API_VERSION = "1.0.0";
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Puts the ports on the context, gives every request an id (a valid incoming x-request-id is kept and
 * echoed) and logs one debug line per request.
 */
function requestContext(deps: ApiDeps): MiddlewareHandler<AppEnv> {
  const uploadLocks = createUploadLocks();
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
    c.set("deps", deps);
    c.set("requestId", requestId);
    c.set("uploadLocks", uploadLocks);
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
  const settings = deps.config.tokenThrottle;
  const gate = createVerifyGate({ concurrency: settings.verifyConcurrency });
  const metrics = authMetrics(deps.metrics, () => gate.stats());
  const onCounterError = () => metrics.counterErrors.inc();
  if (deps.config.rateLimitPerMinute !== undefined) {
    const limit = rateLimit(deps.config.rateLimitPerMinute, deps.counters, deps.log, onCounterError);
    for (const p of bearerPaths) app.use(p, limit);
  }

  registerPostToken(app, {
    gate,
    metrics,
    throttle: createTokenThrottle({
      counter: deps.counters,
      settings: {
        windowSeconds: settings.failureWindowSeconds,
        maxFailuresPerAddress: settings.maxFailuresPerAddress,
        maxFailuresPerClient: settings.maxFailuresPerClient,
        knownSeconds: DEFAULT_KNOWN_SECONDS,
      },
      log: deps.log,
      onCounterError,
    }),
  });
  registerDetectionRoutes(app);
  registerUploadRoutes(app, { maxDocumentBytes: deps.config.maxDocumentBytes });
  registerJobRoutes(app);
  registerWebhookRoutes(app);
  registerReviewRoutes(app);
  registerHealthRoutes(app);
  registerJwksRoute(app);
  registerMetricsRoute(app, deps.metrics);
  registerDocsRoutes(app);

  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) {
    app.openAPIRegistry.registerComponent("securitySchemes", name, scheme);
  }
  // A function: serve-api learns the bound port (and so publicUrl) only after the app is built.
  const documentConfig = () =>
    ({
      openapi: "3.0.3",
      info: {
        title: "docverify — document verification service",
        version: API_VERSION,
        description:
          "Assesses fraud risk in financial and identity documents. Detection is asynchronous: create a detection " +
          "(202, QUEUED), then poll it until COMPLETED or FAILED. Every /v1 and /jobs operation needs a bearer " +
          "token from POST /token (OAuth 2.0 client credentials); in this page, **Authorize** fetches one.",
        license: { name: "Proprietary: licensed to the deployment's operator" },
      },
      servers: [{ url: deps.publicUrl.replace(/\/+$/, ""), description: "This deployment" }],
      // The default for every operation; public ones (token, upload PUT, health) say `security: []`.
      security: bearer(),
      tags: [
        { name: "auth", description: "Access tokens (OAuth 2.0 client credentials)" },
        { name: "detections", description: "Create, read, list and delete detections" },
        { name: "uploads", description: "Upload a document for a detection (the alternative to source_url)" },
        { name: "jobs", description: "Batch jobs over a bucket" },
        {
          name: "webhooks",
          description: "The caller's webhook endpoints, their delivery log and replays (Standard Webhooks)",
        },
        {
          name: "review",
          description: "The reviewer page of a detection, opened by the signed review_url of its evidence",
        },
        { name: "operations", description: "Liveness and readiness" },
      ],
    }) satisfies Parameters<typeof app.getOpenAPIDocument>[0];
  let cached: { url: string; document: unknown } | undefined;
  app.get("/openapi.json", (c) => {
    if (cached?.url !== deps.publicUrl) {
      cached = { url: deps.publicUrl, document: normalizeOpenApi(app.getOpenAPIDocument(documentConfig())) };
    }
    return c.json(cached.document, 200);
  });

  app.notFound(notFoundHandler(app));
  app.onError(errorHandler);
  return app;
}
