import { type OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { projectDetection } from "../../core/detection-detail.js";
import type { Detection } from "../../core/detection.js";
import { OBJECT_NAME_RE } from "../../core/resource.js";
import type { ApiDeps, AppEnv } from "../deps.js";
import { locateClientDetection } from "../detections/access.js";
import { readEvidence, readPageImage } from "../detections/evidence-read.js";
import { PAGE_FILE_RE } from "../detections/schema.js";
import { ApiError } from "../errors.js";
import { errorJson } from "../schema.js";
import { NOT_FOUND_HTML, REVIEW_HEADERS, reviewPage } from "./page.js";
import { clientStillTrusts } from "../auth/credential-binding.js";
import { checkReviewToken, reviewTokenClient } from "./signing.js";

/**
 * The reviewer page and its images, opened by the signed link GET /v1/detection/{id}/evidence returns
 * (api/review/signing.ts) instead of a bearer token. A link that does not open the page — malformed,
 * wrong, expired, another detection's or another client's, or a detection deleted meanwhile — gets the
 * same 404 page, so it reveals nothing.
 */

const ReviewParams = z.object({
  detection_id: z
    .string()
    .max(253)
    .openapi({ param: { name: "detection_id", in: "path" }, example: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
});
const ReviewQuery = z.object({
  token: z
    .string()
    .max(200)
    .optional()
    .openapi({
      param: { name: "token", in: "query" },
      description: "The link's token, as review_url carries it",
    }),
});
const html = (description: string, example: string) => ({
  description,
  content: { "text/html": { schema: z.string(), example } },
});
const NOT_FOUND = html(
  "The link is malformed, wrong, expired, for another detection or client, or the detection is gone (one answer for all)",
  "<!doctype html>… This review link is not valid …",
);
const UNAVAILABLE = errorJson("The service's storage is unavailable", [
  "The service's storage is unavailable; retry in a few seconds.",
]);

export const getReviewPageRoute = createRoute({
  method: "get",
  path: "/review/{detection_id}",
  tags: ["review"],
  summary: "The reviewer page of a detection (HTML, opened by a signed link)",
  description:
    "A self-contained page (no external origin: style and script inline, allowed by hash in its " +
    "Content-Security-Policy) showing the score band, the headline groups, the page images with numbered " +
    "boxes, before/after of incremental edits and the per-check list. Opened by `review_url` from GET " +
    "/v1/detection/{detection_id}/evidence; no bearer token. Its images load from /review/{detection_id}/pages/{file} " +
    "with the same token.",
  operationId: "getReviewPage",
  security: [],
  request: { params: ReviewParams, query: ReviewQuery },
  responses: {
    200: html("The reviewer page", "<!doctype html>…"),
    404: NOT_FOUND,
    503: UNAVAILABLE,
  },
});

export const getReviewImageRoute = createRoute({
  method: "get",
  path: "/review/{detection_id}/pages/{file}",
  tags: ["review"],
  summary: "A page image of the reviewer page (PNG, opened by the link's token)",
  description:
    "The same images as GET /v1/detection/{detection_id}/evidence/pages/{file}, authorised by the review link's token.",
  operationId: "getReviewPageImage",
  security: [],
  request: {
    params: ReviewParams.extend({
      file: z
        .string()
        .max(64)
        .openapi({
          param: { name: "file", in: "path" },
          example: "1.png",
          description: "`<page>.png` or `<page>-first-saved.png`",
        }),
    }),
    query: ReviewQuery,
  },
  responses: {
    200: {
      description: "The page image",
      content: { "image/png": { schema: z.string().openapi({ type: "string", format: "binary" }) } },
    },
    404: NOT_FOUND,
    503: UNAVAILABLE,
  },
});

/** The detection a link opens, or undefined (never says why). */
async function openedBy(
  deps: ApiDeps,
  id: string,
  token: string | undefined,
): Promise<Detection | undefined> {
  const client = reviewTokenClient(token);
  if (!OBJECT_NAME_RE.test(id) || client === undefined) return undefined;
  // The signature first: a forged link costs no lookup.
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  if (!checkReviewToken(token, id, client, now, deps.tokens.hmac)) return undefined;
  // A removed client's links stop working (issued = expiry - the links' lifetime).
  const expires = Number(token!.split(".")[0]);
  if (!clientStillTrusts(deps, client, (expires - deps.config.reviewLinkTtlSeconds) * 1000)) return undefined;
  try {
    return (await locateClientDetection(deps, client, id)).detection;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return undefined;
    throw e;
  }
}

export function registerReviewRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getReviewPageRoute, async (c) => {
    const { detection_id } = c.req.valid("param");
    const { token } = c.req.valid("query");
    const deps = c.var.deps;
    const d = await openedBy(deps, detection_id, token);
    if (!d) return c.html(NOT_FOUND_HTML, 404, REVIEW_HEADERS) as never;
    const state = await readEvidence(deps, d);
    const id = encodeURIComponent(d.metadata.name);
    const signed = encodeURIComponent(token as string);
    const page = reviewPage({
      detail: projectDetection(d),
      state,
      imageUrl: (n, v) =>
        `/review/${id}/pages/${n}${v === "first-saved" ? "-first-saved" : ""}.png?token=${signed}`,
    });
    return c.html(page, 200, REVIEW_HEADERS) as never;
  });

  app.openapi(getReviewImageRoute, async (c) => {
    const { detection_id, file } = c.req.valid("param");
    const { token } = c.req.valid("query");
    const deps = c.var.deps;
    const m = PAGE_FILE_RE.exec(file);
    const d = m ? await openedBy(deps, detection_id, token) : undefined;
    const png =
      d && m ? await readPageImage(deps, d, Number(m[1]), m[2] ? "first-saved" : "submitted") : undefined;
    if (!png) return c.html(NOT_FOUND_HTML, 404, REVIEW_HEADERS) as never;
    return c.body(new Uint8Array(png), 200, {
      ...REVIEW_HEADERS,
      "Content-Type": "image/png",
      "Cache-Control": "private, max-age=300",
    }) as never;
  });
}
