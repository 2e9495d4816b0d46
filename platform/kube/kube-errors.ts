import { StoreError } from "../../core/ports.js";

/**
 * Maps what @kubernetes/client-node throws (ApiException: `code` + a Status `body`; watch errors:
 * `statusCode`; network errors: a `code` like ECONNREFUSED) to the store's error vocabulary, in one place.
 */

/** The apiserver refused the identity (401/403): a deployment problem (RBAC, token), never retried away. */
export class KubeAccessError extends Error {
  override name = "KubeAccessError";
  constructor(
    readonly status: 401 | 403,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface KubeStatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  code?: number;
}

/** The HTTP status and the Status object (if any) of an error thrown by the client or a watch. */
export function httpStatusOf(err: unknown): { status?: number; body?: KubeStatusBody } {
  if (typeof err !== "object" || err === null) return {};
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown };
  const status =
    typeof e.code === "number" ? e.code : typeof e.statusCode === "number" ? e.statusCode : undefined;
  let body: KubeStatusBody | undefined;
  if (typeof e.body === "object" && e.body !== null) body = e.body as KubeStatusBody;
  else if (typeof e.body === "string") {
    try {
      const parsed: unknown = JSON.parse(e.body);
      if (typeof parsed === "object" && parsed !== null) body = parsed as KubeStatusBody;
    } catch {
      // not JSON: no Status to read
    }
  }
  return { status: status ?? body?.code, body };
}

export interface ErrorContext {
  /** e.g. "create", "update", "update status", "delete", "list", "watch", "get". */
  verb: string;
  /** e.g. "Detection det-01" or "Pods". */
  what: string;
}

/**
 * One pure mapping: 404 → NotFound, 409 → AlreadyExists (reason AlreadyExists or a create) else Conflict,
 * 410 → Gone, 413 → TooLarge, 400/422 → Invalid with the apiserver's message, 401/403 → KubeAccessError,
 * 429/5xx/network → Unavailable. Anything else is returned unchanged.
 */
export function toStoreError(err: unknown, ctx: ErrorContext): Error {
  if (err instanceof StoreError || err instanceof KubeAccessError) return err;
  const { status, body } = httpStatusOf(err);
  const apiMessage = body?.message;
  const opts = { cause: err };
  switch (status) {
    case 404:
      return new StoreError("NotFound", apiMessage ?? `${ctx.what} not found`, opts);
    case 409:
      if (body?.reason === "AlreadyExists" || (body?.reason === undefined && ctx.verb === "create"))
        return new StoreError("AlreadyExists", apiMessage ?? `${ctx.what} already exists`, opts);
      return new StoreError(
        "Conflict",
        apiMessage ??
          `Operation cannot be fulfilled on ${ctx.what}: the object has been modified; read it again and retry`,
        opts,
      );
    case 410:
      return new StoreError("Gone", apiMessage ?? `The watch of ${ctx.what} expired; list again`, opts);
    case 413:
      return new StoreError(
        "TooLarge",
        `The apiserver refused to ${ctx.verb} ${ctx.what} as too large${apiMessage ? ` (${apiMessage})` : ""}.`,
        opts,
      );
    case 400:
    case 422:
      return new StoreError(
        "Invalid",
        apiMessage ?? `The apiserver refused to ${ctx.verb} ${ctx.what}`,
        opts,
      );
    case 401:
    case 403:
      return new KubeAccessError(
        status,
        `The Kubernetes API refused to ${ctx.verb} ${ctx.what} (${status}${apiMessage ? `: ${apiMessage}` : ""}); check the service account's Role and RoleBinding (deploy/rbac/).`,
        opts,
      );
    case 500:
      // etcd's own limit (1.5 MiB by default) surfaces as a 500; the size guard normally refuses first.
      if (apiMessage && /request is too large/i.test(apiMessage))
        return new StoreError(
          "TooLarge",
          `The apiserver could not ${ctx.verb} ${ctx.what}: ${apiMessage}`,
          opts,
        );
      return unavailable(status, apiMessage, ctx, opts);
    case 429:
    case 502:
    case 503:
    case 504:
      return unavailable(status, apiMessage, ctx, opts);
  }
  if (status === undefined && isNetworkError(err)) {
    return new StoreError(
      "Unavailable",
      `The Kubernetes API could not be reached to ${ctx.verb} ${ctx.what} (${describe(err)}); retry shortly.`,
      opts,
    );
  }
  return err instanceof Error ? err : new Error(String(err));
}

function unavailable(
  status: number,
  apiMessage: string | undefined,
  ctx: ErrorContext,
  opts: { cause: unknown },
): StoreError {
  return new StoreError(
    "Unavailable",
    `The Kubernetes API could not ${ctx.verb} ${ctx.what} (${status}${apiMessage ? `: ${apiMessage}` : ""}); retry shortly.`,
    opts,
  );
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

function isNetworkError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const x = e as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof x.code === "string" && NETWORK_CODES.has(x.code)) return true;
    if (x.name === "TimeoutError" || x.name === "AbortError") return true;
    if (e instanceof TypeError && e.message === "fetch failed") return true;
    e = x.cause;
  }
  return false;
}

function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const x = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof x.code === "string") parts.push(x.code);
    else if (typeof x.message === "string" && x.message) parts.push(x.message);
    e = x.cause;
  }
  return parts.join(": ") || "unknown error";
}

/** True for a watch ERROR event's Status object that means "resourceVersion too old". */
export function isGoneStatus(obj: unknown): boolean {
  const s = obj as KubeStatusBody | undefined;
  return s?.code === 410 || s?.reason === "Expired" || s?.reason === "Gone";
}
