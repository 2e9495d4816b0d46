import { type OpenAPIHono, createRoute } from "@hono/zod-openapi";
import { listArchivedDetections } from "../../core/archive.js";
import type { Detection } from "../../core/detection.js";
import { apiStatusToPhase, isTerminal } from "../../core/phases.js";
import { LABELS, OBJECT_NAME_RE, labelValue } from "../../core/resource.js";
import { SCOPES } from "../../core/scopes.js";
import { requireScopes } from "../auth/middleware.js";
import type { AppEnv } from "../deps.js";
import { invalid } from "../errors.js";
import { bearer, bearerErrors, jsonResponse, validationJson } from "../schema.js";
import { clientLabel, sha256Hex, visibleTo } from "./access.js";
import { project } from "./project.js";
import { CURSOR_MESSAGE, DetectionDetail, DetectionList, ListDetectionsQuery } from "./schema.js";

/** Opaque cursor: the id of the last item of the previous page (ids sort by creation time). */
export const encodeCursor = (lastId: string) =>
  Buffer.from(JSON.stringify({ after: lastId })).toString("base64url");

export function decodeCursor(cursor: string): string {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof v.after === "string" && OBJECT_NAME_RE.test(v.after)) return v.after;
  } catch {
    // reported below
  }
  throw invalid(["query", "cursor"], CURSOR_MESSAGE, "value_error", cursor);
}

export const listDetectionsRoute = createRoute({
  method: "get",
  path: "/v1/detection",
  tags: ["detections"],
  summary: "List the caller's detections, newest first",
  description:
    "Pages of at most `limit` (1-200, default 50); pass `next_cursor` as `cursor` for the next page. " +
    "Filters: `status`, `batch_id`. Only the calling client's detections are listed, archived ones included. " +
    "A page costs what it holds, not the client's whole history.",
  operationId: "listDetections",
  security: bearer(SCOPES.get),
  middleware: [requireScopes([SCOPES.get])] as const,
  request: { query: ListDetectionsQuery },
  responses: {
    200: jsonResponse(DetectionList, "One page of detections"),
    ...bearerErrors(SCOPES.get),
    422: validationJson("A query parameter is invalid", [
      {
        loc: ["query", "limit"],
        msg: "Too big: expected number to be <=200",
        type: "less_than_equal",
        input: "500",
        ctx: { le: 200 },
      },
    ]),
  },
});

/** Newest first: ids are ULIDs, so name order is creation order. */
const newestFirst = (a: Detection, b: Detection) =>
  a.metadata.name < b.metadata.name ? 1 : a.metadata.name > b.metadata.name ? -1 : 0;

export function registerListDetections(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listDetectionsRoute, async (c) => {
    const q = c.req.valid("query");
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    const principal = c.var.principal;
    const deps = c.var.deps;
    const labels: Record<string, string> = { [LABELS.client]: clientLabel(principal.clientId) };
    if (q.batch_id !== undefined) labels[LABELS.batch] = labelValue(q.batch_id, sha256Hex);
    const phase = q.status === undefined ? undefined : apiStatusToPhase(q.status);
    // The live detections: few (the finished ones are archived), read from the store (an informer's
    // cache in the cluster) and sorted here.
    const { items } = await deps.detections.list({ labels });
    const liveNames = new Set(items.map((d) => d.metadata.name));
    const live = items
      .filter(
        (d) =>
          visibleTo(d, principal) &&
          (q.batch_id === undefined || d.spec.batchId === q.batch_id) &&
          (phase === undefined || (d.status?.phase ?? "Queued") === phase) &&
          (after === undefined || d.metadata.name < after),
      )
      .sort(newestFirst);
    // The archive: pages from the cursor (only finished detections are archived), usually just one.
    const archived: Detection[] = [];
    let archiveDone = !(phase === undefined || isTerminal(phase));
    let archiveBefore = after;
    const moreArchived = async () => {
      const got = await listArchivedDetections(deps.objects, deps.bucket, principal.clientId, {
        ...(phase === "Completed" || phase === "Failed" ? { phase } : {}),
        ...(q.batch_id !== undefined ? { batchId: q.batch_id } : {}),
        ...(archiveBefore !== undefined ? { before: archiveBefore } : {}),
        limit: q.limit + 1,
        // A damaged record is left out of the page, a damaged verdict reads null; the operators are told.
        onUnreadable: (u) =>
          deps.log.error(
            { detection: u.id, key: u.key, problem: u.reason },
            u.what === "record"
              ? "an archived record is damaged; the detection is left out of the listing"
              : "an archived verdict is damaged; the detection is listed with verdict null",
          ),
      });
      archived.push(...got);
      archiveDone = got.length < q.limit + 1;
      archiveBefore = got.at(-1)?.metadata.name ?? archiveBefore;
    };
    // Merge newest first, one more than the page to know whether another follows. A detection both
    // archived and still a resource (an archive pass between its record and its deletion) is listed
    // once, as the resource; one being deleted not at all.
    const page: Detection[] = [];
    let i = 0;
    let j = 0;
    while (page.length <= q.limit) {
      if (j === archived.length && !archiveDone) await moreArchived();
      const a = archived[j];
      const l = live[i];
      if (!a && !l) break;
      if (a && liveNames.has(a.metadata.name)) {
        j++;
      } else if (l && (!a || l.metadata.name > a.metadata.name)) {
        page.push(l);
        i++;
      } else if (a) {
        page.push(a);
        j++;
      }
    }
    const slice = page.slice(0, q.limit);
    const more = page.length > q.limit;
    return c.json(
      {
        items: slice.map((d) => DetectionDetail.parse(project(d))),
        next_cursor: more ? encodeCursor(slice[slice.length - 1]!.metadata.name) : null,
      },
      200,
    );
  });
}
