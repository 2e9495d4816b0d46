import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Hono } from "hono";
import type { AppEnv } from "../deps.js";
import { ApiError } from "../errors.js";

/** swagger-ui's files, served from the installed swagger-ui-dist package (no CDN: air-gapped clusters). */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-16x16.png": "image/png",
  "favicon-32x32.png": "image/png",
};

const distDir = () => path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>docverify API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
});
`;

export function registerDocsRoutes(app: Hono<AppEnv>): void {
  const cache = new Map<string, Uint8Array<ArrayBuffer>>();
  const securityHeaders = {
    "Content-Security-Policy":
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'",
    "X-Content-Type-Options": "nosniff",
  };
  app.get("/docs", (c) => c.html(PAGE, 200, securityHeaders));
  app.get("/docs/init.js", (c) =>
    c.body(INIT, 200, { "Content-Type": "text/javascript; charset=utf-8", ...securityHeaders }),
  );
  app.get("/docs/:file", async (c) => {
    const file = c.req.param("file");
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw new ApiError(404, "not_found", "Not Found");
    let bytes = cache.get(file);
    if (!bytes) {
      bytes = new Uint8Array(await readFile(path.join(distDir(), file))) as Uint8Array<ArrayBuffer>;
      cache.set(file, bytes);
    }
    return c.body(bytes, 200, {
      "Content-Type": type,
      "Cache-Control": "public, max-age=86400",
      ...securityHeaders,
    });
  });
}
