/** OAuth scopes of the contract, with nested wildcards (`A:*` covers every scope beneath `A:`). */
export const SCOPES = {
  all: "DocumentVerification:*",
  detectionsAll: "DocumentVerification:detections:*",
  create: "DocumentVerification:detections:create",
  get: "DocumentVerification:detections:get",
  delete: "DocumentVerification:detections:delete",
  createSample: "DocumentVerification:detections:create_sample",
  /** A reviewer's verdict on a detection (PUT /v1/detection/{id}/feedback; docs/tuning.md). */
  feedback: "DocumentVerification:detections:feedback",
  jobsAll: "DocumentVerification:jobs:*",
  jobsCreate: "DocumentVerification:jobs:create",
  jobsGet: "DocumentVerification:jobs:get",
} as const;

/** Every concrete (non-wildcard) scope the service knows. */
export const CONCRETE_SCOPES: readonly string[] = [
  SCOPES.create,
  SCOPES.get,
  SCOPES.delete,
  SCOPES.createSample,
  SCOPES.feedback,
  SCOPES.jobsCreate,
  SCOPES.jobsGet,
];

/** Every wildcard scope the service knows: each covers at least one concrete scope. */
export const WILDCARD_SCOPES: readonly string[] = [SCOPES.all, SCOPES.detectionsAll, SCOPES.jobsAll];

/** A scope the service knows: a concrete scope or one of its wildcards. Anything else grants nothing. */
export const isKnownScope = (scope: string): boolean =>
  CONCRETE_SCOPES.includes(scope) || WILDCARD_SCOPES.includes(scope);

/** The scopes of `scopes` the service does not know (e.g. typos in the clients file), in order. */
export const unknownScopes = (scopes: readonly string[]): string[] => scopes.filter((s) => !isKnownScope(s));

/** True when `held` is `wanted` or a wildcard above it. */
export function scopeCovers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  if (!held.endsWith(":*")) return false;
  const prefix = held.slice(0, -1); // keeps the trailing ':'
  return wanted.startsWith(prefix);
}

export function anyCovers(held: readonly string[], wanted: string): boolean {
  return held.some((h) => scopeCovers(h, wanted));
}

/** The required scopes that `held` does not cover, in the order given. */
export function missingScopes(held: readonly string[], required: readonly string[]): string[] {
  return required.filter((r) => !anyCovers(held, r));
}

/**
 * Which scopes a client registered for `registered` is granted when it asks for `requested`
 * (ARCHITECTURE.md, Decisions: Auth messages). `requested` undefined or empty = every registered scope.
 * - a requested scope the registration covers is granted as named;
 * - a requested wildcard the registration does not cover grants the registered scopes beneath it.
 * Unknown scopes (isKnownScope) are never granted, asked for or registered: not even under a wildcard
 * the client holds. The result has no duplicates and keeps request order.
 */
export function grantScopes(
  registered: readonly string[],
  requested: readonly string[] | undefined,
): string[] {
  const known = registered.filter(isKnownScope);
  if (!requested || requested.length === 0) return [...new Set(known)];
  const out: string[] = [];
  const add = (s: string) => {
    if (!out.includes(s)) out.push(s);
  };
  for (const r of requested) {
    if (!isKnownScope(r)) continue;
    if (anyCovers(known, r)) {
      add(r);
    } else if (r.endsWith(":*")) {
      for (const reg of known) if (scopeCovers(r, reg)) add(reg);
    }
  }
  return out;
}

export function parseScopeParam(scope: string | undefined | null): string[] | undefined {
  if (scope === undefined || scope === null) return undefined;
  const parts = scope.split(/\s+/).filter(Boolean);
  return parts.length ? parts : undefined;
}
