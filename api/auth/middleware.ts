import type { MiddlewareHandler } from "hono";
import { grantScopes, missingScopes } from "../../core/scopes.js";
import type { AppEnv } from "../deps.js";
import { ApiError, unauthorized } from "../errors.js";
import { clientStillTrusts, credentialBinding } from "./credential-binding.js";
import { MESSAGES } from "./tokens.js";

/**
 * Bearer authentication for /v1: sets `principal`, or 401 with the spec's messages.
 * The token is judged against the clients registry as it is now (it is reloaded when the file changes),
 * after the token service's cache, so a cached token is judged too: a client no longer configured is
 * refused (401 `Invalid bearer token`), and a client whose registration shrank keeps only the token's
 * scopes its registration still grants (as POST /token would grant them today). A token issued before the
 * client's secret changed, or before the client was removed from the file, is refused too
 * (api/auth/credential-binding.ts).
 */
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header("authorization");
  const m = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  if (!m) throw unauthorized(MESSAGES.missing);
  const deps = c.var.deps;
  const principal = await deps.tokens.verify(m[1]!);
  const registration = deps.clients.get(principal.clientId);
  if (!registration) throw unauthorized(MESSAGES.invalid);
  // Issued for the client's secret as it is now, and not before the client was last removed.
  if (
    principal.binding === undefined ||
    principal.binding !== credentialBinding(deps, principal.clientId) ||
    !clientStillTrusts(deps, principal.clientId, principal.issuedAtMs ?? 0)
  ) {
    throw unauthorized(MESSAGES.invalid);
  }
  const scopes = principal.scopes.length > 0 ? grantScopes(registration.scopes, principal.scopes) : [];
  c.set("principal", { clientId: principal.clientId, scopes });
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
