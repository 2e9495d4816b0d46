import type { MiddlewareHandler } from "hono";
import { missingScopes } from "../../core/scopes.js";
import type { AppEnv } from "../deps.js";
import { ApiError, unauthorized } from "../errors.js";
import { MESSAGES } from "./tokens.js";

/** Bearer authentication for /v1: sets `principal`, or 401 with the spec's messages. */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header("authorization");
  const m = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  if (!m) throw unauthorized(MESSAGES.missing);
  c.set("principal", await c.var.deps.tokens.verify(m[1]!));
  await next();
};

export const missingScopesError = (missing: readonly string[]) =>
  new ApiError(403, "insufficient_scope", `Missing required scopes: ${missing.join(", ")}`);

/** 403 `Missing required scopes: <names>` unless the token covers every scope `required` returns. */
export function requireScopes(
  required: readonly string[] | ((c: Parameters<MiddlewareHandler<AppEnv>>[0]) => readonly string[]),
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const wanted = typeof required === "function" ? required(c) : required;
    const missing = missingScopes(c.var.principal.scopes, wanted);
    if (missing.length > 0) throw missingScopesError(missing);
    await next();
  };
}
