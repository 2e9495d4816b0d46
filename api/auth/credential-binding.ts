import type { ApiDeps } from "../deps.js";

/**
 * Credentials that stop when they should (issue 25, scope 5; docs/decisions.md "Idempotent creates and
 * credential revocation"). Every credential the API hands a client is judged on every use against the
 * clients file as it is now:
 * - an access token carries its client's credential binding, an HMAC (the API's signing key) of the
 *   fingerprint of the client's secret in the clients file: once the secret changes, the binding differs
 *   and the token is refused (401), without waiting for it to expire;
 * - a client removed from the file is refused at once (it has no registration), and its credentials
 *   issued before the removal stay refused when it is added back, even with the same secret
 *   (api/auth/revocations.ts keeps the instant of the removal, durably);
 * - reviewer links and upload URLs of a removed client stop working the same way.
 */
export function credentialBinding(
  deps: Pick<ApiDeps, "clients" | "tokens">,
  clientId: string,
): string | undefined {
  const fingerprint = deps.clients.fingerprint(clientId);
  return fingerprint === undefined
    ? undefined
    : deps.tokens.hmac(`docverify-credential-binding\n${clientId}\n${fingerprint}`).slice(0, 32);
}

/**
 * True while a credential issued to `clientId` at `issuedAtMs` may be used: the client is registered and
 * was not removed from the clients file after the credential was issued.
 */
export function clientStillTrusts(
  deps: Pick<ApiDeps, "clients" | "revocations">,
  clientId: string,
  issuedAtMs: number,
): boolean {
  if (!deps.clients.get(clientId)) return false;
  const notBefore = deps.revocations.notBefore(clientId);
  return notBefore === undefined || issuedAtMs >= notBefore;
}
