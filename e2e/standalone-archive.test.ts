/**
 * The archive on the running standalone service (the same code as the cluster's): detections finished
 * while archiving was off are archived when the service starts again with DOCVERIFY_ARCHIVE_AFTER_SECONDS,
 * their resource files leave the data directory, and GET, list (pages, status filters), DELETE and then
 * retention behave exactly as before. Each phase is a restart with other settings on the same data
 * directory, so every wait is for an event (files gone, verdict null), never for a deadline.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { CLIENTS, type Service, startFileServer, startService, until } from "./harness.js";

let files: Awaited<ReturnType<typeof startFileServer>>;
const services: Service[] = [];
beforeAll(async () => {
  files = await startFileServer({
    "/statement.pdf": { body: await makeDocument({ seed: 61, docType: "bank_statement", region: "GB" }) },
    "/note.txt": { body: "just a note, not a document", type: "text/plain" },
  });
});
afterAll(async () => {
  for (const s of services) await s.stop();
  for (const s of services) await s.dispose();
  await files?.close();
});

async function start(env: Record<string, string>, dataDir?: string): Promise<Service> {
  const svc = await startService({
    ...(dataDir ? { dataDir } : {}),
    env: {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
      ...env,
    },
  });
  services.push(svc);
  return svc;
}

/** Every listing the test compares: GETs, the pages of limit=2, and each status filter. */
async function snapshot(svc: Service, ids: string[]) {
  const get = async (id: string) =>
    (await svc.call("GET", `/v1/detection/${id}`, { client: CLIENTS.full })).body;
  const pages: unknown[] = [];
  let cursor: string | null = null;
  do {
    const r: { body: { items: unknown[]; next_cursor: string | null } } = await svc.call(
      "GET",
      `/v1/detection?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      { client: CLIENTS.full },
    );
    pages.push(r.body);
    cursor = r.body.next_cursor;
  } while (cursor);
  const byStatus: Record<string, unknown> = {};
  for (const s of ["COMPLETED", "FAILED", "RUNNING"])
    byStatus[s] = (await svc.call("GET", `/v1/detection?status=${s}`, { client: CLIENTS.full })).body;
  return { details: await Promise.all(ids.map(get)), pages, byStatus };
}

const resourceFiles = async (dataDir: string) =>
  (await readdir(path.join(dataDir, "resources", "detections")).catch(() => [] as string[])).filter((f) =>
    f.endsWith(".json"),
  );
async function tracesOf(dataDir: string, id: string): Promise<string[]> {
  const root = path.join(dataDir, "objects");
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .filter((f) => f.includes(id));
}

describe("the archive on the standalone service", () => {
  it("archived detections read, list, delete and are pruned exactly as before", async () => {
    // 1. Archiving off: four detections finish and stay resources.
    const keep = await start({ DOCVERIFY_ARCHIVE_AFTER_SECONDS: "0" });
    const dataDir = keep.dataDir;
    const ids: string[] = [];
    for (const source of ["/statement.pdf", "/note.txt", "/statement.pdf", "/statement.pdf"]) {
      const r = await keep.create(CLIENTS.full, {
        source_url: files.url(source),
        doc_type: "bank_statement",
        region: "GB",
      });
      expect(r.status).toBe(202);
      ids.push(r.body.id);
    }
    for (const id of ids) await keep.waitTerminal(CLIENTS.full, id);
    const before = await snapshot(keep, ids);
    expect(before.details.map((d) => (d as { status: string }).status)).toEqual([
      "COMPLETED",
      "FAILED",
      "COMPLETED",
      "COMPLETED",
    ]);
    expect(await resourceFiles(dataDir)).toHaveLength(4);
    await keep.stop();

    // 2. Archiving after 1 s: the resources go to the archive; every read answers as before.
    const archiving = await start({ DOCVERIFY_ARCHIVE_AFTER_SECONDS: "1" }, dataDir);
    await until(
      "the resources to be archived",
      () => resourceFiles(dataDir),
      (f) => f.length === 0,
    );
    expect(await snapshot(archiving, ids)).toEqual(before);
    // DELETE of an archived detection: 200, then 404 and no file left.
    const gone = ids[2]!;
    expect((await tracesOf(dataDir, gone)).length).toBeGreaterThan(0);
    const del = await archiving.call("DELETE", `/v1/detection/${gone}`, { client: CLIENTS.full });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: gone, deleted: true });
    expect((await archiving.call("GET", `/v1/detection/${gone}`, { client: CLIENTS.full })).status).toBe(404);
    expect((await archiving.call("GET", `/v1/detection/${gone}`, { client: CLIENTS.other })).status).toBe(
      404,
    );
    expect(await tracesOf(dataDir, gone)).toEqual([]);
    const listed = await archiving.call("GET", "/v1/detection?limit=50", { client: CLIENTS.full });
    expect(listed.body.items.map((d: { id: string }) => d.id)).toEqual([ids[3], ids[1], ids[0]]);
    await archiving.stop();

    // 3. Retention of 1 s: the archived verdicts read null, scores and statuses stay, files go.
    const pruning = await start(
      {
        DOCVERIFY_ARCHIVE_AFTER_SECONDS: "1",
        DOCVERIFY_RETENTION_SECONDS: "1",
        DOCVERIFY_ARCHIVE_SWEEP_SECONDS: "1",
      },
      dataDir,
    );
    const completed = before.details[0] as { id: string; score: number; verdict: unknown };
    expect(completed.verdict).not.toBeNull();
    const after = await until(
      "the archived verdict to be pruned",
      async () => (await pruning.call("GET", `/v1/detection/${completed.id}`, { client: CLIENTS.full })).body,
      (b) => b.verdict === null,
    );
    expect(after).toEqual({ ...completed, verdict: null });
    for (const id of [ids[0]!, ids[1]!, ids[3]!])
      await until(
        `the files of ${id}`,
        () => tracesOf(dataDir, id),
        (t) => t.length === 0,
      );
  });
});
