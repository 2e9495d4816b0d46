import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** A fresh Standard Webhooks secret. */
export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

export interface ReceivedRequest {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Whether the standardwebhooks verifier accepted it with the receiver's secret. */
  verified: boolean;
  /** The status the receiver answered (undefined: it held the request and never answered). */
  answered?: number;
}

/**
 * A real webhook receiver on loopback: verifies each request with the `standardwebhooks` library and
 * answers what `behaviour` says for the n-th request (0-based): a status, a redirect, or `hold` (never
 * answer: a crash test kills the sender meanwhile). Tests wait on `waitFor`.
 */
export async function startReceiver(opts: {
  secret: string;
  host?: string;
  behaviour?: (
    n: number,
    req: ReceivedRequest,
  ) => number | "hold" | "drop" | { redirect: string } | { status: number; delayMs: number };
}) {
  const received: ReceivedRequest[] = [];
  const waiters: { check: () => boolean; resolve: () => void }[] = [];
  const held: http.ServerResponse[] = [];
  const verifier = new Webhook(opts.secret);
  const notify = () => {
    for (const w of waiters.splice(0)) {
      if (w.check()) w.resolve();
      else waiters.push(w);
    }
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      let verified = false;
      try {
        verifier.verify(body, headers);
        verified = true;
      } catch {
        verified = false;
      }
      const r: ReceivedRequest = {
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        verified,
      };
      const n = received.length;
      received.push(r);
      const what = opts.behaviour?.(n, r) ?? 200;
      if (what === "hold") {
        held.push(res);
      } else if (what === "drop") {
        // Read, then the connection is cut: the sender never learns it arrived.
        res.socket?.destroy();
      } else if (typeof what === "object" && "delayMs" in what) {
        const t = setTimeout(() => {
          if (res.socket?.destroyed) return;
          r.answered = what.status;
          res.writeHead(what.status).end();
          notify();
        }, what.delayMs);
        res.on("close", () => clearTimeout(t));
      } else if (typeof what === "object") {
        r.answered = 302;
        res.writeHead(302, { location: what.redirect }).end();
      } else {
        r.answered = what;
        res.writeHead(what, { "content-type": "text/plain" }).end(what < 300 ? "ok" : "no");
      }
      notify();
    });
  });
  await new Promise<void>((r) => server.listen(0, opts.host ?? "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (p = "/hook") => `http://${opts.host ?? "127.0.0.1"}:${port}${p}`,
    received,
    /** Resolves once `check` holds over what was received (checked on every request). */
    waitFor(check: (got: ReceivedRequest[]) => boolean): Promise<void> {
      if (check(received)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ check: () => check(received), resolve }));
    },
    close: () =>
      new Promise<void>((r) => {
        for (const h of held) h.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
