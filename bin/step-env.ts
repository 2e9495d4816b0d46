/**
 * Settings of the api or the operator that a step process must never see (both runtimes): the token
 * signing key and the clients registry, and the operator's own wiring.
 */
export const NOT_FOR_STEPS: ReadonlySet<string> = new Set([
  "DOCVERIFY_TOKEN_SIGNING_KEY",
  "DOCVERIFY_TOKEN_SIGNING_KEY_FILE",
  "DOCVERIFY_ATTESTATION_KEY_FILE",
  "DOCVERIFY_CLIENTS_FILE",
  "DOCVERIFY_STEP_POD",
  "DOCVERIFY_STEP_IMAGE",
  "DOCVERIFY_STEP_ENV_SECRET",
  "REDIS_URL",
  "KUBE_NAMESPACE",
]);

/** The environment a step inherits: `env` without what steps must never see (and unset values). */
export function envForSteps(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !NOT_FOR_STEPS.has(k)) out[k] = v;
  return out;
}
