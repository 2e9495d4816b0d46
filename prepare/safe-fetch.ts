import net from "node:net";
import { type Agent, request } from "undici";
import { addressGuard, createGuardedAgent, findGuardError } from "../core/address-guard.js";
import { describePorts, effectivePort, type PortRanges, portAllowed } from "../core/address-policy.js";

/**
 * An SSRF-guarded HTTP(S) GET for the prepare step, on undici 7.
 *
 * Every connection, including each redirect hop, goes through one connector that refuses non-public
 * addresses (see address-policy.ts) unless `allowPrivate` is set: host names are checked on the addresses
 * DNS returns (the same addresses the socket then connects to, so DNS rebinding cannot slip past), and IP
 * literals, which never reach `lookup`, are checked before connecting. Numeric host forms such as
 * `http://2130706433/` or `http://0x7f.1/` are normalised to dotted IPv4 by the WHATWG URL parser first.
 * Redirects are followed here (at most `maxRedirects`, http/https only, each to an allowed port). Size and
 * time are capped.
 * Every failure is a SourceError carrying the failure code the detection fails with.
 */

export type SourceFailureCode =
  | "source_unreachable"
  | "source_forbidden"
  | "source_http_error"
  | "source_too_large"
  | "source_timeout";

export class SourceError extends Error {
  override name = "SourceError";
  constructor(
    readonly code: SourceFailureCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
  /** The source's HTTP status, for source_http_error. */
  readonly status: number | undefined;
}

export interface SafeFetchOptions {
  /** Allow loopback/private/link-local/... destinations (DOCVERIFY_ALLOW_PRIVATE_SOURCES). */
  allowPrivate: boolean;
  /**
   * Ports the source URL and every redirect may name (DOCVERIFY_ALLOWED_SOURCE_PORTS, default 80 and 443),
   * whatever the address: a public host's SMTP, Redis or admin port is no document source.
   */
  allowedPorts: PortRanges;
  /** Whole download deadline: connect, headers and body of every hop. */
  timeoutMs: number;
  /** Largest body accepted; reading stops as soon as it is exceeded. */
  maxBytes: number;
  signal?: AbortSignal;
  /** Default 5. */
  maxRedirects?: number;
  /** Per-connection connect timeout; default min(timeoutMs, 10 s). */
  connectTimeoutMs?: number;
  /**
   * Exact addresses accepted although not public (an operator's allowlist of internal document hosts;
   * tests use it to reach a loopback server while every other private address stays refused).
   */
  allowAddresses?: readonly string[];
}

export interface SafeFetchResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL the body came from, after redirects. */
  finalUrl: string;
  /** Every URL visited before finalUrl. */
  redirects: string[];
}

const USER_AGENT = "docverify/0.1 (document verification; +https://docverify.io)";

/** The host of a parsed URL as an IP literal (brackets removed), or undefined for a name. */
function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return net.isIP(host) ? host : undefined;
}

function parseSourceUrl(raw: string, allowedPorts: PortRanges, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch (cause) {
    throw new SourceError("source_unreachable", `The source URL "${raw}" is not a valid URL.`, { cause });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SourceError(
      "source_forbidden",
      `The source URL uses the scheme "${url.protocol.replace(/:$/, "")}"; only http and https are fetched.`,
    );
  }
  if (url.username || url.password) {
    // Credentials in URLs would be sent to whatever host a redirect names; refuse them outright.
    throw new SourceError(
      "source_forbidden",
      "The source URL carries a user name or password, which is not allowed.",
    );
  }
  const port = effectivePort(url);
  if (!portAllowed(port, allowedPorts)) {
    throw new SourceError(
      "source_forbidden",
      `The source URL ${url.href} uses port ${port}; this deployment fetches only from ports ${describePorts(allowedPorts)} (DOCVERIFY_ALLOWED_SOURCE_PORTS).`,
    );
  }
  return url;
}

const UNREACHABLE_CODES = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NONAME",
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EPIPE",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "UND_ERR_REQ_RETRY") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Maps a network error of one hop to a SourceError. */
function toSourceError(err: unknown, url: URL): SourceError {
  if (err instanceof SourceError) return err;
  const guard = findGuardError(err);
  if (guard) return new SourceError("source_forbidden", guard.message, { cause: err });
  const code = errorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  if (code === "ENOTFOUND" || code === "EAI_NONAME" || code === "EAI_AGAIN" || code === "EAI_FAIL") {
    return new SourceError("source_unreachable", `The host ${url.hostname} could not be resolved.`, {
      cause: err,
    });
  }
  if (code === "ECONNREFUSED") {
    return new SourceError("source_unreachable", `The host ${url.host} refused the connection.`, {
      cause: err,
    });
  }
  if (code && UNREACHABLE_CODES.has(code)) {
    return new SourceError("source_unreachable", `The connection to ${url.host} failed (${code}).`, {
      cause: err,
    });
  }
  // TLS failures, malformed HTTP and the like: the source cannot be reached as an HTTP(S) server.
  return new SourceError("source_unreachable", `The download from ${url.host} failed: ${detail}`, {
    cause: err,
  });
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

/**
 * GETs `rawUrl` through the guard. Resolves with a 2xx response; throws SourceError otherwise.
 */
export async function safeFetch(rawUrl: string, opts: SafeFetchOptions): Promise<SafeFetchResponse> {
  const maxRedirects = opts.maxRedirects ?? 5;
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(
        new SourceError("source_timeout", `The download did not finish within ${opts.timeoutMs} ms.`),
      ),
    opts.timeoutMs,
  );
  const signal = opts.signal ? AbortSignal.any([deadline.signal, opts.signal]) : deadline.signal;
  const guard = addressGuard(opts.allowPrivate, opts.allowAddresses);
  const agent = createGuardedAgent(guard, Math.min(opts.timeoutMs, opts.connectTimeoutMs ?? 10_000));
  const redirects: string[] = [];
  let url = parseSourceUrl(rawUrl, opts.allowedPorts);
  try {
    for (;;) {
      const literal = ipLiteral(url);
      const refusal = literal ? guard(literal, literal) : undefined;
      if (refusal) throw new SourceError("source_forbidden", refusal.message);
      const res = await fetchOnce(url, agent, signal, opts.maxBytes).catch((err: unknown) => {
        if (deadline.signal.aborted) throw deadline.signal.reason as SourceError;
        if (opts.signal?.aborted) throw opts.signal.reason ?? err;
        throw toSourceError(err, url);
      });
      if (res.kind === "redirect") {
        if (redirects.length >= maxRedirects) {
          throw new SourceError(
            "source_http_error",
            `The source redirected more than ${maxRedirects} times; the last address was ${url.href}.`,
            { status: res.status },
          );
        }
        redirects.push(url.href);
        url = parseSourceUrl(res.location, opts.allowedPorts, url);
        continue;
      }
      return { status: res.status, headers: res.headers, body: res.body, finalUrl: url.href, redirects };
    }
  } finally {
    clearTimeout(timer);
    agent.destroy().catch(() => undefined);
  }
}

/** Stops reading a body we do not want; its abort error is expected and ignored. */
function discard(body: NodeJS.ReadableStream & { destroy(): unknown }): void {
  body.on("error", () => undefined);
  body.destroy();
}

type HopResult =
  | { kind: "redirect"; status: number; location: string }
  | { kind: "body"; status: number; headers: Record<string, string>; body: Buffer };

async function fetchOnce(url: URL, agent: Agent, signal: AbortSignal, maxBytes: number): Promise<HopResult> {
  const res = await request(url, {
    method: "GET",
    dispatcher: agent,
    signal,
    headers: { "user-agent": USER_AGENT, accept: "*/*", "accept-encoding": "identity" },
  });
  const headers = flattenHeaders(res.headers);
  const status = res.statusCode;
  if (status >= 300 && status < 400 && status !== 304 && headers.location) {
    discard(res.body);
    return { kind: "redirect", status, location: headers.location };
  }
  if (status < 200 || status >= 300) {
    discard(res.body);
    throw new SourceError("source_http_error", `The source answered HTTP ${status} for ${url.href}.`, {
      status,
    });
  }
  const declared = headers["content-length"];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    discard(res.body);
    throw new SourceError(
      "source_too_large",
      `The source declares ${declared} bytes, more than the limit of ${maxBytes} bytes.`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBytes) {
      discard(res.body);
      throw new SourceError("source_too_large", `The source sent more than the limit of ${maxBytes} bytes.`);
    }
    chunks.push(buf);
  }
  return { kind: "body", status, headers, body: Buffer.concat(chunks, size) };
}
