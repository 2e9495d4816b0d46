import dns from "node:dns";
import net from "node:net";
import { Agent, buildConnector } from "undici";
import { classifyAddress, describeRange } from "./address-policy.js";

/**
 * The connection guard of the address policy (address-policy.ts), shared by everything that connects to
 * an address a user chose: the prepare step's downloads (prepare/safe-fetch.ts) and webhook deliveries
 * (platform/http/webhook-sender.ts). Host names are checked on the addresses DNS returns, and the socket
 * connects to exactly those addresses (so DNS rebinding cannot slip past); IP literals, which never reach
 * `lookup`, are checked before connecting.
 */

export const SSRF_CODE = "ESSRF";

export class GuardError extends Error {
  override name = "GuardError";
  readonly code = SSRF_CODE;
}

function refuse(host: string, address: string, range: string, what: string): GuardError {
  const where = host === address ? address : `${host} (${address})`;
  return new GuardError(
    `The ${what} address ${where} is ${describeRange(range)}, which this deployment does not ${what === "source" ? "fetch from" : "connect to"}.`,
  );
}

type LookupCallback = (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

/** Undefined when `ip` may be connected to; otherwise the refusal. */
export type AddressGuard = (host: string, ip: string) => GuardError | undefined;

/**
 * The guard of one policy: every public address, plus the exact addresses of `allowAddresses`
 * (DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES), or everything when `allowPrivate` (DOCVERIFY_ALLOW_PRIVATE_SOURCES).
 * `what` names the address in messages ("source", "webhook").
 */
export function addressGuard(
  allowPrivate: boolean,
  allowAddresses: readonly string[] = [],
  what = "source",
): AddressGuard {
  const allowed = new Set(allowAddresses.map((a) => classifyAddress(a).address));
  return (host, ip) => {
    if (allowPrivate) return undefined;
    const verdict = classifyAddress(ip);
    if (verdict.public || allowed.has(verdict.address)) return undefined;
    return refuse(host, verdict.address, verdict.range, what);
  };
}

/** A net.connect `lookup` that refuses host names resolving to any refused address. */
function guardedLookup(guard: AddressGuard) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      for (const a of list) {
        const refusal = guard(hostname, a.address);
        if (refusal) return callback(refusal, []);
      }
      const first = list[0];
      if (!first) {
        return callback(Object.assign(new Error(`No address for ${hostname}`), { code: "ENOTFOUND" }), []);
      }
      if (options.all) return callback(null, list);
      callback(null, first.address, first.family);
    });
  };
}

/** An undici Agent whose every connection goes through `guard`. */
export function createGuardedAgent(guard: AddressGuard, connectTimeoutMs: number): Agent {
  const base = buildConnector({
    timeout: connectTimeoutMs,
    lookup: guardedLookup(guard) as unknown as typeof dns.lookup,
  });
  const connect: buildConnector.connector = (opts, callback) => {
    // IP literals never reach `lookup`, so they are judged here.
    const host = opts.hostname.replace(/^\[|\]$/g, "");
    const refusal = net.isIP(host) ? guard(host, host) : undefined;
    if (refusal) {
      callback(refusal, null);
      return;
    }
    return base(opts, callback);
  };
  return new Agent({ connect, headersTimeout: 0, bodyTimeout: 0 });
}

/** The guard's refusal somewhere in an error's cause chain, if that is why it failed. */
export function findGuardError(err: unknown): GuardError | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    if (e instanceof GuardError || (e as { code?: unknown }).code === SSRF_CODE) return e as GuardError;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
