import type { Hono, NotFoundHandler } from "hono";
import type { AppEnv } from "../deps.js";

interface Pattern {
  re: RegExp;
  method: string;
}

function toPattern(path: string, method: string): Pattern {
  const re = path
    .split("/")
    .map((seg) =>
      seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return { re: new RegExp(`^${re}/?$`), method };
}

/**
 * No route matched: 405 (with Allow) when the path exists under another method, else 404.
 * Both answer JSON `{"detail": ...}`.
 */
export function notFoundHandler(app: Hono<AppEnv>): NotFoundHandler<AppEnv> {
  let patterns: Pattern[] | undefined;
  return (c) => {
    patterns ??= app.routes.filter((r) => r.method !== "ALL").map((r) => toPattern(r.path, r.method));
    const allowed = [...new Set(patterns.filter((p) => p.re.test(c.req.path)).map((p) => p.method))];
    if (allowed.length > 0) {
      if (allowed.includes("GET") && !allowed.includes("HEAD")) allowed.push("HEAD");
      return c.json({ detail: "Method Not Allowed" }, 405, { Allow: allowed.join(", ") });
    }
    return c.json({ detail: "Not Found" }, 404);
  };
}
