import { createHash } from "node:crypto";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { IDEMPOTENCY_WINDOW_MS } from "../core/idempotency.js";
import type { ResourceStore } from "../core/ports.js";
import { ANNOTATIONS, LABELS, type ObjectMeta, type Resource } from "../core/resource.js";
import type { ApiDeps } from "./deps.js";
import { ApiError, invalid } from "./errors.js";

/**
 * Idempotent creates (IETF httpapi "The Idempotency-Key HTTP Header Field" draft; docs/api.md,
 * docs/decisions.md "Idempotent creates and credential revocation").
 *
 * The record of a key is the created resource itself: its label `docverify.io/idempotency-key` holds a hash
 * of the client and the key, its annotation `docverify.io/idempotency-request` a hash of the request. Both
 * are written by the same create as the resource, so a crash between creating and answering leaves a
 * resource that the retry finds (through the store port, read consistently: never an informer's cache), and
 * nothing can exist without its record. While one request with a key is creating, a second one is refused
 * with 409 (a short lock on the WindowCounter port, shared by every replica); after it, the same request is
 * answered with the resource it created (202, the same id) and another request with that key is 422.
 */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** How long one create may hold its key before another request with it may try again (a crashed holder). */
const IN_FLIGHT_MS = 60_000;
export const MAX_KEY_CHARS = 255;
/** A bare key: characters that need no quoting anywhere (UUIDs, ULIDs, base64url, …). */
const BARE_KEY_RE = /^[A-Za-z0-9._~:+/=-]+$/;
/** The inside of an sf-string key (RFC 8941): printable ASCII without `"` and `\`. */
const QUOTED_KEY_RE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/** The header's OpenAPI description (both create routes). */
export const idempotencyHeaderSchema = z
  .string()
  .optional()
  .openapi({
    description:
      "Makes the create safe to retry (IETF httpapi Idempotency-Key draft): a unique value per create, e.g. a " +
      'UUID, bare or as a quoted string (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), 1-255 characters of ' +
      'A-Z a-z 0-9 `. _ ~ : + / = -` (a quoted key may hold any printable ASCII but `"` and `\\`). Within 24 hours, ' +
      "the same key with the same request answers the resource the first request created (202, the same id, " +
      "`Idempotent-Replayed: true`) and creates nothing; with another request it is 422 " +
      "(`idempotency_key_reused`); while the first request with the key is still being answered it is 409 " +
      "(`idempotency_key_in_flight`, retry after `Retry-After` seconds). Keys are per client. A malformed key " +
      "is 400 (`idempotency_key_invalid`).",
    example: "8e03978e-40d5-43e8-bc93-6894a57f9324",
  });

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * The key of a request, unquoted; undefined without the header; 400 when it is malformed (empty, too long,
 * characters outside the rule).
 */
export function parseIdempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim();
  const quoted = v.length >= 2 && v.startsWith('"') && v.endsWith('"');
  const key = quoted ? v.slice(1, -1) : v;
  const problem =
    key.length === 0
      ? "is empty"
      : key.length > MAX_KEY_CHARS
        ? `has ${key.length} characters, more than ${MAX_KEY_CHARS}`
        : !(quoted ? QUOTED_KEY_RE : BARE_KEY_RE).test(key)
          ? quoted
            ? 'has a character outside printable ASCII, or a `"` or `\\` inside the quotes'
            : 'has a character outside A-Z a-z 0-9 . _ ~ : + / = - (quote it as "…" for other printable ASCII)'
          : undefined;
  if (problem) {
    throw new ApiError(
      400,
      "idempotency_key_invalid",
      `The Idempotency-Key header ${problem}; send 1-${MAX_KEY_CHARS} characters such as a UUID (e.g. Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324), a new one for each create.`,
    );
  }
  return key;
}

/** The label value of client `clientId`'s key: 40 hex digits of a hash of both (a valid label value). */
export const idempotencyLabel = (kind: string, clientId: string, key: string) =>
  sha256Hex(`docverify-idempotency\n${kind}\n${clientId}\n${key}`).slice(0, 40);

/** A hash of what makes two creates the same request (the validated body and the headers that matter). */
export const requestFingerprint = (request: unknown) => sha256Hex(JSON.stringify(request));

export interface IdempotencyScope<R extends Resource> {
  /** "detection" or "job": keys of one kind never meet the other's. */
  kind: string;
  store: ResourceStore<R>;
  /** Label selector of the client's own resources (its `docverify.io/client` label). */
  clientLabels: Record<string, string>;
  clientId: string;
  key: string;
  /** requestFingerprint of this request. */
  fingerprint: string;
}

export type IdempotencyStart<R extends Resource> =
  | { replay: R }
  | {
      /** Labels and annotation to put on the resource this request creates. */
      stamp(meta: ObjectMeta): ObjectMeta;
      /** Lets other requests with the key in (call once the create is answered or failed). */
      release(): Promise<void>;
    };

const byAge = (a: Resource, b: Resource) => {
  const ta = a.metadata.creationTimestamp ?? "";
  const tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
};

/** The client's live resource created with this key in the last 24 hours, if any (the oldest). */
async function findCreated<R extends Resource>(
  scope: IdempotencyScope<R>,
  label: string,
  now: Date,
): Promise<R | undefined> {
  const { items } = await scope.store.list({
    labels: { ...scope.clientLabels, [LABELS.idempotencyKey]: label },
    consistent: true,
  });
  const since = now.getTime() - IDEMPOTENCY_WINDOW_MS;
  return items
    .filter((r) => !r.metadata.deletionTimestamp)
    .filter((r) => {
      const t = Date.parse(r.metadata.creationTimestamp ?? "");
      return Number.isNaN(t) || t >= since;
    })
    .sort(byAge)[0];
}

/** The 422 of a key used for another request: an HTTPValidationError, as every 422 of the API. */
export const REUSED_MESSAGE =
  "This Idempotency-Key was already used with a different request in the last 24 hours; send a new key for a new create, or repeat the original request exactly to get its answer.";
const reused = (key: string) =>
  invalid(["header", "idempotency-key"], REUSED_MESSAGE, "idempotency_key_reused", key);

/** The replayed resource when its request matches this one; 422 when the key was used for another. */
function replayOf<R extends Resource>(existing: R, fingerprint: string, key: string): { replay: R } {
  if (existing.metadata.annotations?.[ANNOTATIONS.idempotencyRequest] !== fingerprint) throw reused(key);
  return { replay: existing };
}

/**
 * Starts a create under an Idempotency-Key: the resource an earlier request with the key created (to answer
 * again), or the right to create (with the labels to stamp on it), or 409 while another request with the key
 * is creating, or 422 when the key was used for another request.
 */
export async function startIdempotent<R extends Resource>(
  deps: ApiDeps,
  scope: IdempotencyScope<R>,
): Promise<IdempotencyStart<R>> {
  const label = idempotencyLabel(scope.kind, scope.clientId, scope.key);
  const lockKey = `idem:${scope.kind}:${label}`;
  const now = deps.clock.now();
  let holder = true;
  let retryAfter = Math.ceil(IN_FLIGHT_MS / 1000);
  try {
    const w = await deps.counters.hit(lockKey, IN_FLIGHT_MS);
    holder = w.count === 1;
    retryAfter = Math.max(1, Math.ceil(w.resetInMs / 1000));
  } catch (err) {
    // The counters' backend is down: the lookup below still answers retries of finished creates.
    deps.log.error({ err }, "the idempotency lock is unavailable; creating without it");
  }
  const release = async () => {
    if (holder) await deps.counters.clear(lockKey).catch(() => undefined);
  };
  let existing: R | undefined;
  try {
    existing = await findCreated(scope, label, now);
  } catch (err) {
    await release();
    throw err;
  }
  if (existing) {
    await release();
    return replayOf(existing, scope.fingerprint, scope.key);
  }
  if (!holder) {
    throw new ApiError(
      409,
      "idempotency_key_in_flight",
      `A request with this Idempotency-Key is still being answered; retry the same request after ${retryAfter} seconds to get its answer.`,
      { headers: { "Retry-After": String(retryAfter) } },
    );
  }
  return {
    stamp: (meta) => ({
      ...meta,
      labels: { ...meta.labels, [LABELS.idempotencyKey]: label },
      annotations: { ...meta.annotations, [ANNOTATIONS.idempotencyRequest]: scope.fingerprint },
    }),
    release,
  };
}

/** The Idempotency-Key of `c`'s request (validated), or undefined. */
export const idempotencyKeyOf = (c: Context) => parseIdempotencyKey(c.req.header(IDEMPOTENCY_HEADER));

/** Marks an answer as a replay (the header Stripe and others send; informative only). */
export const REPLAYED_HEADER = "Idempotent-Replayed";
