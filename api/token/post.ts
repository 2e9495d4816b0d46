import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { grantScopes, isKnownScope, parseScopeParam } from "../../core/scopes.js";
import type { AuthMetrics } from "../auth/auth-metrics.js";
import { addressKey, peerAddress } from "../auth/client-address.js";
import type { TokenThrottle } from "../auth/token-throttle.js";
import { GateBusyError, type VerifyGate } from "../auth/verify-gate.js";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";
import { errorJson, jsonResponse, PUBLIC } from "../schema.js";
import { cacheBodyText, mediaType, readBodyLimited } from "../validation.js";
import { credentialBinding } from "../auth/credential-binding.js";
import { TokenError, TokenRequest, TokenResponse } from "./schema.js";

const MAX_FORM_BYTES = 16 * 1024;
const FORM = "application/x-www-form-urlencoded";

const oauthError = (
  status: 400 | 401 | 429,
  code: string,
  detail: string,
  headers?: Record<string, string>,
) => new ApiError(status, code, detail, { oauth: true, headers });

/**
 * 429 for a throttled token request. RFC 6749 defines no code for it; `temporarily_unavailable` (its
 * "try again later") is the closest. The message never says which limit applied, so it does not tell
 * whether a client_id exists.
 */
const throttled = (retryAfterSeconds: number, detail: string) =>
  oauthError(
    429,
    "temporarily_unavailable",
    `${detail} Retry after ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`,
    { "Retry-After": String(retryAfterSeconds) },
  );

/**
 * A blocked request is answered only after this long (or its Retry-After, if shorter): an attacker that
 * ignores Retry-After then gets one answer per second and connection instead of thousands, and the hold
 * costs a timer, not CPU. Known clients are never blocked, so never held.
 */
export const THROTTLE_HOLD_MS = 1000;

const sleepTimer = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What POST /token needs besides the ports: throttling state shared by the app's requests. */
export interface TokenGuard {
  throttle: TokenThrottle;
  gate: VerifyGate;
  metrics: AuthMetrics;
}

/** The body must be form-encoded (RFC 6749 §4.4.2); anything else is a 400 that says so. */
const requireForm: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = mediaType(c.req.header("content-type"));
  if (type !== FORM) {
    throw oauthError(
      400,
      "invalid_request",
      `The token request body must be form-encoded (Content-Type: ${FORM})${type === "application/json" ? ", not JSON" : ""}.`,
    );
  }
  const buf = await readBodyLimited(c, MAX_FORM_BYTES);
  cacheBodyText(c, buf.toString("utf8"));
  await next();
};

export const postTokenRoute = createRoute({
  method: "post",
  path: "/token",
  tags: ["auth"],
  summary: "Obtain an access token (OAuth 2.0 client_credentials)",
  description:
    "Grants the requested scopes the client is registered for (wildcards nest; a requested wildcard the " +
    "registration does not cover grants the registered scopes beneath it; no `scope` grants every registered " +
    "scope). Client credentials come in the form or as HTTP Basic. Errors carry `detail` and the RFC 6749 `error`.",
  operationId: "createToken",
  security: PUBLIC,
  middleware: [requireForm] as const,
  request: { body: { content: { [FORM]: { schema: TokenRequest } }, required: true } },
  responses: {
    200: jsonResponse(TokenResponse, "The access token"),
    400: tokenError("unsupported grant_type, invalid_scope or invalid_request", {
      unsupported_grant_type: "unsupported grant_type",
      invalid_scope:
        "None of the requested scopes is granted to this client; it is registered for: DocumentVerification:detections:get.",
      invalid_request: `The token request body must be form-encoded (Content-Type: ${FORM}), not JSON.`,
    }),
    401: tokenError("invalid_client: unknown client, wrong secret or malformed HTTP Basic credentials", {
      invalid_client: "Client authentication failed: unknown client or wrong secret.",
    }),
    413: errorJson(`The form is larger than ${MAX_FORM_BYTES / 1024} KiB`, [
      `The request body is larger than the limit of ${MAX_FORM_BYTES} bytes.`,
    ]),
    429: tokenError(
      "temporarily_unavailable: too many failed authentications from this address or against this client " +
        "(the request was held up to 1 s; see Retry-After), or too many at once",
      { temporarily_unavailable: "Too many failed client authentications. Retry after 1 second." },
    ),
  },
});

/** A TokenError answer whose examples pair each RFC 6749 `error` with its `detail`. */
function tokenError(description: string, examples: Record<string, string>) {
  return {
    description,
    content: {
      "application/json": {
        schema: TokenError,
        examples: Object.fromEntries(
          Object.entries(examples).map(([error, detail]) => [
            error,
            { summary: error, value: { detail, error } },
          ]),
        ),
      },
    },
  };
}

function decodeCredential(s: string): string {
  if (!s.includes("%")) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** client_id:client_secret from an HTTP Basic header (RFC 6749 §2.3.1), or undefined when absent. */
function basicCredentials(
  header: string | undefined,
): { id: string; secret: string } | undefined | "malformed" {
  if (!header) return undefined;
  const m = /^Basic[ \t]+([A-Za-z0-9+/]+=*)[ \t]*$/i.exec(header);
  if (!m) return /^Basic\b/i.test(header) ? "malformed" : undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) return "malformed";
  return { id: decodeCredential(decoded.slice(0, i)), secret: decodeCredential(decoded.slice(i + 1)) };
}

export function registerPostToken(app: OpenAPIHono<AppEnv>, guard: TokenGuard): void {
  app.openapi(
    postTokenRoute,
    async (c) => {
      const deps = c.var.deps;
      const form = c.req.valid("form");
      if (form.grant_type !== "client_credentials") {
        throw oauthError(400, "unsupported_grant_type", "unsupported grant_type");
      }
      const basic = basicCredentials(c.req.header("authorization"));
      const challenge = basic
        ? { "WWW-Authenticate": 'Basic realm="docverify", charset="UTF-8"' }
        : undefined;
      if (basic === "malformed") {
        throw oauthError(401, "invalid_client", "The HTTP Basic credentials are malformed.", challenge);
      }
      if (basic && (form.client_id !== undefined || form.client_secret !== undefined)) {
        if (form.client_id !== basic.id || form.client_secret !== undefined) {
          throw oauthError(
            400,
            "invalid_request",
            "Send the client credentials either as HTTP Basic or in the form, not both.",
          );
        }
      }
      const id = basic?.id ?? form.client_id;
      const secret = basic?.secret ?? form.client_secret;
      if (!id || secret === undefined) {
        throw oauthError(
          401,
          "invalid_client",
          "Client authentication failed: send client_id and client_secret in the form or as HTTP Basic.",
          challenge,
        );
      }
      const address = addressKey(peerAddress(c, deps.config.trustedProxyHops));
      const verdict = await guard.throttle.check(id, address);
      if (!verdict.allowed) {
        guard.metrics.throttled.inc({ reason: verdict.reason });
        const hold = Math.min(verdict.retryAfterSeconds * 1000, THROTTLE_HOLD_MS);
        await (deps.sleep ?? sleepTimer)(hold);
        const left = Math.max(1, verdict.retryAfterSeconds - Math.floor(hold / 1000));
        throw throttled(left, "Too many failed client authentications.");
      }
      let client: Awaited<ReturnType<typeof deps.clients.verify>>;
      try {
        client = await guard.gate.run({ source: address, lane: verdict.lane }, () =>
          deps.clients.verify(id, secret),
        );
      } catch (err) {
        if (!(err instanceof GateBusyError)) throw err;
        guard.metrics.throttled.inc({ reason: "busy" });
        throw throttled(1, "Too many client authentications at once.");
      }
      if (client) await guard.throttle.recordSuccess(id, address);
      else {
        guard.metrics.failures.inc();
        await guard.throttle.recordFailure(id, address);
      }
      if (!client) {
        throw oauthError(
          401,
          "invalid_client",
          "Client authentication failed: unknown client or wrong secret.",
          challenge,
        );
      }
      const requested = parseScopeParam(form.scope);
      const granted = grantScopes(client.scopes, requested);
      if (granted.length === 0) {
        throw oauthError(
          400,
          "invalid_scope",
          requested
            ? `None of the requested scopes is granted to this client; it is registered for: ${client.scopes.filter(isKnownScope).join(", ") || "no scopes"}.`
            : "This client is registered for no scopes; ask the operator to add scopes to its registration.",
        );
      }
      const issued = await deps.tokens.issue(
        client.client_id,
        granted,
        credentialBinding(deps, client.client_id),
      );
      c.header("Cache-Control", "no-store");
      c.header("Pragma", "no-cache");
      return c.json(
        {
          access_token: issued.accessToken,
          token_type: "bearer" as const,
          expires_in: issued.expiresIn,
          scope: issued.scope,
        },
        200,
      );
    },
    (result) => {
      if (!result.success) {
        const dup = result.error.issues.map((i) => String(i.path[0] ?? "form")).join(", ");
        throw oauthError(
          400,
          "invalid_request",
          `Each form field may appear once and must be text (check: ${dup}).`,
        );
      }
    },
  );
}
