import { createHash } from "node:crypto";
import { backoffMs } from "../../core/backoff.js";
import type { Logger } from "../../core/step-context.js";
import type { WindowCount, WindowCounter } from "../../core/window-counter.js";
import type { GateLane } from "./verify-gate.js";

/**
 * Throttling of failed client authentication at POST /token (docs/decisions.md, "Throttling"), on the
 * WindowCounter port so every API replica counts together.
 *
 * Failures are counted in a window per source address, per client_id and per (client_id, address) pair.
 * When a count reaches its threshold, each further failure blocks that key for an exponentially growing
 * time: 1 s, 2 s, 4 s, … up to the failure window. A blocked request is answered 429 with Retry-After
 * before any secret is checked, so it costs no scrypt.
 *
 * A pair that authenticated successfully recently is "known": it is exempt from the address and client
 * blocks (an attacker elsewhere, or sharing the client's id, cannot lock a working integrator out) but not
 * from its own pair block, which guesses from that very address against that very client_id would raise.
 */
export interface TokenThrottleSettings {
  /** Length of a failure-counting window, and the longest block, in seconds. */
  windowSeconds: number;
  /** Failures from one address (any client_id) before blocks start; 0 = not counted. */
  maxFailuresPerAddress: number;
  /** Failures against one client_id (any address) before blocks start; 0 = not counted. */
  maxFailuresPerClient: number;
  /** How long a successful pair stays known, in seconds. */
  knownSeconds: number;
}

export const DEFAULT_KNOWN_SECONDS = 7 * 24 * 3600;

/**
 * `lane` orders the secret checks (verify-gate.ts): `known` for a known pair, `suspect` when the address
 * failed in the current window, else `clean`.
 */
export type ThrottleVerdict =
  | { allowed: true; lane: GateLane }
  | { allowed: false; retryAfterSeconds: number; reason: "address" | "client" | "pair" };

export interface TokenThrottle {
  /** Whether a request of `clientId` from `address` may have its secret checked. */
  check(clientId: string, address: string): Promise<ThrottleVerdict>;
  recordFailure(clientId: string, address: string): Promise<void>;
  recordSuccess(clientId: string, address: string): Promise<void>;
}

/**
 * Seconds a key is blocked after its `count`-th failure (threshold `max`): 1 s at the threshold, doubling
 * with each failure after it (core/backoff.ts), at most `capSeconds`.
 */
export function blockSeconds(count: number, max: number, capSeconds: number): number {
  if (max <= 0 || count < max) return 0;
  return backoffMs(count - max + 1, { firstMs: 1000, maxMs: capSeconds * 1000 }) / 1000;
}

/** A bounded, opaque key part for a client_id (ids arrive from the network: any length or bytes). */
const idKey = (clientId: string) => createHash("sha256").update(clientId).digest("hex").slice(0, 32);

export function createTokenThrottle(deps: {
  counter: WindowCounter;
  settings: TokenThrottleSettings;
  log: Logger;
  onCounterError?: () => void;
}): TokenThrottle {
  const { counter, settings, log } = deps;
  const windowMs = settings.windowSeconds * 1000;
  const knownMs = settings.knownSeconds * 1000;
  const perPair = settings.maxFailuresPerAddress > 0 ? Math.ceil(settings.maxFailuresPerAddress / 2) : 0;
  const keys = (clientId: string, address: string) => {
    const c = idKey(clientId);
    return {
      known: `token:known:${c}:${address}`,
      fail: {
        address: `token:fail:a:${address}`,
        client: `token:fail:c:${c}`,
        pair: `token:fail:p:${c}:${address}`,
      },
      block: {
        address: `token:block:a:${address}`,
        client: `token:block:c:${c}`,
        pair: `token:block:p:${c}:${address}`,
      },
    };
  };

  // The counters protect; they are not needed to serve. When the backend fails, requests go on (the
  // verification gate still bounds the CPU), and the failure is logged at most every 30 s.
  let lastLogged = 0;
  const counterFailed = (err: unknown) => {
    deps.onCounterError?.();
    if (Date.now() - lastLogged > 30_000) {
      lastLogged = Date.now();
      log.error({ err }, "the throttling counters are unavailable; /token is not throttled meanwhile");
    }
  };
  const seconds = (w: WindowCount) => Math.max(1, Math.ceil(w.resetInMs / 1000));

  return {
    async check(clientId, address) {
      const k = keys(clientId, address);
      try {
        const [known, pair, addr, client, failures] = await Promise.all([
          counter.peek(k.known),
          counter.peek(k.block.pair),
          counter.peek(k.block.address),
          counter.peek(k.block.client),
          counter.peek(k.fail.address),
        ]);
        if (pair.count > 0) return { allowed: false, retryAfterSeconds: seconds(pair), reason: "pair" };
        if (known.count > 0) return { allowed: true, lane: "known" };
        if (addr.count > 0) return { allowed: false, retryAfterSeconds: seconds(addr), reason: "address" };
        if (client.count > 0) return { allowed: false, retryAfterSeconds: seconds(client), reason: "client" };
        return { allowed: true, lane: failures.count > 0 ? "suspect" : "clean" };
      } catch (err) {
        counterFailed(err);
        return { allowed: true, lane: "clean" };
      }
    },

    async recordFailure(clientId, address) {
      const k = keys(clientId, address);
      const limits = [
        ["address", settings.maxFailuresPerAddress],
        ["client", settings.maxFailuresPerClient],
        ["pair", perPair],
      ] as const;
      try {
        await Promise.all(
          limits
            .filter(([, max]) => max > 0)
            .map(async ([which, max]) => {
              const { count } = await counter.hit(k.fail[which], windowMs);
              const block = blockSeconds(count, max, settings.windowSeconds);
              if (block > 0) await counter.hit(k.block[which], block * 1000);
            }),
        );
      } catch (err) {
        counterFailed(err);
      }
    },

    async recordSuccess(clientId, address) {
      const k = keys(clientId, address);
      try {
        // A right secret proves the pair: its own failures are forgiven. The address and client counts
        // stay (a caller holding one valid credential must not reset what it guessed at others).
        const [known] = await Promise.all([counter.peek(k.known), counter.clear(k.fail.pair)]);
        if (known.count === 0 || known.resetInMs < knownMs / 2) {
          await counter.clear(k.known);
          await counter.hit(k.known, knownMs);
        }
      } catch (err) {
        counterFailed(err);
      }
    },
  };
}
