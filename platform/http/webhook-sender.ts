import net from "node:net";
import { request } from "undici";
import { addressGuard, createGuardedAgent, findGuardError } from "../../core/address-guard.js";
import { describePorts, effectivePort, type PortRanges, portAllowed } from "../../core/address-policy.js";
import type { WebhookSender, WebhookSendResult } from "../../core/ports.js";

export interface WebhookSenderOptions {
  /** DOCVERIFY_ALLOW_PRIVATE_SOURCES: the same policy as source downloads. */
  allowPrivate: boolean;
  /** DOCVERIFY_ALLOWED_PRIVATE_ADDRESSES. */
  allowAddresses?: readonly string[];
  /** DOCVERIFY_ALLOWED_SOURCE_PORTS. */
  allowedPorts: PortRanges;
  timeoutMs: number;
  maxResponseBytes: number;
}

const USER_AGENT = "docverify-webhooks/0.1 (+https://docverify.io)";

/**
 * The webhook sender over undici: one POST per attempt through the address guard of source downloads
 * (core/address-guard.ts), so the endpoint's address is resolved and checked on every attempt and the
 * socket connects to the checked address. A redirect is never followed (undici's `request` does not):
 * it is a failed attempt whose log line names where it pointed. The answer's body is read up to
 * `maxResponseBytes` and dropped; the whole attempt has one deadline.
 */
export function createWebhookSender(opts: WebhookSenderOptions): WebhookSender {
  const guard = addressGuard(opts.allowPrivate, opts.allowAddresses ?? [], "webhook");
  const agent = createGuardedAgent(guard, Math.min(opts.timeoutMs, 10_000));

  async function send(req: {
    url: string;
    headers: Record<string, string>;
    body: string;
  }): Promise<WebhookSendResult> {
    const started = performance.now();
    const done = (r: Omit<WebhookSendResult, "durationMs">): WebhookSendResult => ({
      ...r,
      durationMs: Math.round(performance.now() - started),
    });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return done({ outcome: "refused", message: `The webhook URL "${req.url}" is not a valid URL.` });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return done({
        outcome: "refused",
        message: `The webhook URL uses ${url.protocol}; only http and https are sent to.`,
      });
    const port = effectivePort(url);
    if (!portAllowed(port, opts.allowedPorts)) {
      return done({
        outcome: "refused",
        message: `The webhook URL ${url.href} uses port ${port}; this deployment connects only to ports ${describePorts(opts.allowedPorts)} (DOCVERIFY_ALLOWED_SOURCE_PORTS).`,
      });
    }
    const literal = url.hostname.replace(/^\[|\]$/g, "");
    const refusal = net.isIP(literal) ? guard(literal, literal) : undefined;
    if (refusal) return done({ outcome: "refused", message: refusal.message });

    const deadline = AbortSignal.timeout(opts.timeoutMs);
    try {
      const res = await request(url, {
        method: "POST",
        dispatcher: agent,
        signal: deadline,
        headers: {
          ...req.headers,
          "content-type": "application/json",
          "user-agent": USER_AGENT,
        },
        body: req.body,
      });
      const status = res.statusCode;
      let read = 0;
      let tooLarge = false;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > opts.maxResponseBytes) {
          tooLarge = true;
          res.body.on("error", () => undefined);
          res.body.destroy();
          break;
        }
      }
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        return done({
          outcome: "redirect",
          status,
          message: `The endpoint answered HTTP ${status}${location ? ` to ${String(location)}` : ""}; redirects are not followed (register the final URL).`,
        });
      }
      if (status < 200 || status >= 300)
        return done({ outcome: "http_error", status, message: `The endpoint answered HTTP ${status}.` });
      if (tooLarge) {
        // Acknowledged: the status is what counts; only the reading stopped.
        return done({
          outcome: "delivered",
          status,
          message: `Delivered (HTTP ${status}); the answer's body was longer than ${opts.maxResponseBytes} bytes and not read to its end.`,
        });
      }
      return done({ outcome: "delivered", status, message: `Delivered (HTTP ${status}).` });
    } catch (err) {
      const guardErr = findGuardError(err);
      if (guardErr) return done({ outcome: "refused", message: guardErr.message });
      if (deadline.aborted)
        return done({
          outcome: "timeout",
          message: `The endpoint did not answer within ${opts.timeoutMs} ms.`,
        });
      const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
      const detail = err instanceof Error ? err.message : String(err);
      return done({
        outcome: "unreachable",
        message: `The endpoint ${url.host} could not be reached (${code ?? detail}).`,
      });
    }
  }

  return { send, close: () => agent.close().catch(() => undefined) };
}
