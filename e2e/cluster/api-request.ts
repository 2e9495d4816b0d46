import https from "node:https";

/** Where and as whom to reach the test cluster's kube-apiserver. */
export interface ClusterAccess {
  url: string;
  caPem: string;
  token?: string;
}

export interface ApiResponse<T = unknown> {
  status: number;
  /** Parsed JSON when the answer is JSON, else the raw text. */
  body: T;
}

/**
 * One plain HTTPS request to the apiserver (TLS verified against the cluster CA), for the harness and
 * for tests that must see raw status codes (403, 409, 422) rather than a client library's exceptions.
 */
export function apiRequest<T = unknown>(
  access: ClusterAccess,
  method: string,
  path: string,
  body?: unknown,
  opts: { contentType?: string; timeoutMs?: number } = {},
): Promise<ApiResponse<T>> {
  const url = new URL(path, access.url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { accept: "application/json" };
  if (access.token) headers.authorization = `Bearer ${access.token}`;
  if (payload) {
    headers["content-type"] = opts.contentType ?? "application/json";
    headers["content-length"] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method, headers, ca: access.caPem, timeout: opts.timeoutMs ?? 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          if ((res.headers["content-type"] ?? "").includes("json") && text.length > 0) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T });
        });
      },
    );
    req.on("timeout", () =>
      req.destroy(new Error(`${method} ${url.pathname}: no answer from the apiserver in time`)),
    );
    req.on("error", reject);
    if (payload) req.write(payload);
    req.end();
  });
}
