import { createHmac, randomUUID } from "node:crypto";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { type Clock, systemClock } from "../../core/ports.js";
import type { Principal } from "../deps.js";
import { unauthorized } from "../errors.js";

export const TOKEN_ISSUER = "docverify";
export const TOKEN_AUDIENCE = "docverify";
export const MESSAGES = {
  missing: "Missing bearer token",
  expired: "Token has expired",
  invalid: "Invalid bearer token",
} as const;

export interface IssuedToken {
  accessToken: string;
  /** Seconds until the token expires. */
  expiresIn: number;
  /** Space-separated granted scopes. */
  scope: string;
}

export interface TokenService {
  /**
   * Signs an access token for `clientId` carrying exactly `scopes`, bound to `binding` (the client's
   * credential binding, api/auth/credential-binding.ts: the token is refused once the secret changes).
   */
  issue(clientId: string, scopes: readonly string[], binding?: string): Promise<IssuedToken>;
  /**
   * The principal of a valid token; throws ApiError 401 `Token has expired` or `Invalid bearer token`.
   * Verified tokens are cached (bounded) until their exp, so a repeated call costs no signature check.
   */
  verify(token: string): Promise<Principal>;
  /** Hex HMAC-SHA256 of `data` with the signing key (signed upload URLs). */
  hmac(data: string): string;
  /** How many verified tokens the cache holds (for metrics). */
  cachedTokens(): number;
}

export interface TokenServiceOptions {
  /** HS256 key bytes (DOCVERIFY_TOKEN_SIGNING_KEY); at least 32 bytes. */
  key: Uint8Array;
  ttlSeconds: number;
  clock?: Clock;
  /** How many verified tokens to remember (default 10 000). */
  cacheSize?: number;
}

/** Private claims: the credential binding and the issue time in milliseconds (revocation is that precise). */
const BINDING_CLAIM = "cfp";
const ISSUED_MS_CLAIM = "iat_ms";

interface Cached {
  principal: Principal;
  /** exp claim, seconds since the epoch. */
  exp: number;
}

const epochSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function createTokenService(opts: TokenServiceOptions): TokenService {
  if (opts.key.byteLength < 32) {
    throw new Error(
      `The token signing key has ${opts.key.byteLength} bytes; HS256 needs at least 32 (DOCVERIFY_TOKEN_SIGNING_KEY).`,
    );
  }
  if (!Number.isInteger(opts.ttlSeconds) || opts.ttlSeconds < 1) {
    throw new Error(`The token lifetime must be a whole number of seconds ≥ 1, got ${opts.ttlSeconds}.`);
  }
  const key = new Uint8Array(opts.key);
  const clock = opts.clock ?? systemClock;
  const cacheSize = opts.cacheSize ?? 10_000;
  const cache = new Map<string, Cached>();

  function remember(token: string, entry: Cached): void {
    cache.set(token, entry);
    while (cache.size > cacheSize) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
  }

  return {
    async issue(clientId, scopes, binding) {
      const nowMs = clock.now().getTime();
      const iat = Math.floor(nowMs / 1000);
      const scope = scopes.join(" ");
      const claims: Record<string, string | number> = { scope, [ISSUED_MS_CLAIM]: nowMs };
      if (binding !== undefined) claims[BINDING_CLAIM] = binding;
      const accessToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(clientId)
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + opts.ttlSeconds)
        .setJti(randomUUID())
        .sign(key);
      return { accessToken, expiresIn: opts.ttlSeconds, scope };
    },

    async verify(token) {
      const now = clock.now();
      const hit = cache.get(token);
      if (hit) {
        if (epochSeconds(now) >= hit.exp) {
          cache.delete(token);
          throw unauthorized(MESSAGES.expired);
        }
        return { ...hit.principal, scopes: [...hit.principal.scopes] };
      }
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: ["HS256"],
          issuer: TOKEN_ISSUER,
          audience: TOKEN_AUDIENCE,
          currentDate: now,
          requiredClaims: ["sub", "exp", "iat", "jti"],
        }));
      } catch (err) {
        if (err instanceof joseErrors.JWTExpired) throw unauthorized(MESSAGES.expired);
        throw unauthorized(MESSAGES.invalid);
      }
      const { sub, scope, exp, iat } = payload;
      if (typeof sub !== "string" || typeof scope !== "string" || typeof exp !== "number") {
        throw unauthorized(MESSAGES.invalid);
      }
      const binding = payload[BINDING_CLAIM];
      const issuedMs = payload[ISSUED_MS_CLAIM];
      const principal: Principal = {
        clientId: sub,
        scopes: scope.split(" ").filter(Boolean),
        issuedAtMs: typeof issuedMs === "number" ? issuedMs : typeof iat === "number" ? iat * 1000 : 0,
        ...(typeof binding === "string" ? { binding } : {}),
      };
      remember(token, { principal, exp });
      return { ...principal, scopes: [...principal.scopes] };
    },

    hmac: (data) => createHmac("sha256", key).update(data).digest("hex"),
    cachedTokens: () => cache.size,
  };
}
