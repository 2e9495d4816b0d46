import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "../fixtures/temp-dirs.js";
import { createLocalObjectStore } from "../platform/local/object-store.js";
import { parseTarget, putFolder, runPutFolder } from "./put-folder.js";

const tmp = tempDirs();
afterAll(tmp.removeAll);

async function sourceFolder(): Promise<string> {
  const dir = await tmp.make("docverify-put-src-");
  await mkdir(path.join(dir, "scans", "deep"), { recursive: true });
  await writeFile(path.join(dir, "a.pdf"), "%PDF-a");
  await writeFile(path.join(dir, "scans", "b.png"), "png-b");
  await writeFile(path.join(dir, "scans", "deep", "c.pdf"), "%PDF-c");
  return dir;
}

describe("parseTarget", () => {
  it("splits bucket and prefix, giving the prefix a trailing slash", () => {
    expect(parseTarget("inbox")).toEqual({ bucket: "inbox", prefix: "" });
    expect(parseTarget("inbox/2026-11-02")).toEqual({ bucket: "inbox", prefix: "2026-11-02/" });
    expect(parseTarget("inbox/a/b/")).toEqual({ bucket: "inbox", prefix: "a/b/" });
  });
});

describe("putFolder", () => {
  it("copies every file below the folder under the prefix, keeping relative paths", async () => {
    const src = await sourceFolder();
    await symlink(path.join(src, "a.pdf"), path.join(src, "link.pdf"));
    const root = await tmp.make("docverify-put-dst-");
    const objects = createLocalObjectStore(root);
    const r = await putFolder(objects, src, "inbox", "day1/");
    expect(r.keys).toEqual(["day1/a.pdf", "day1/scans/b.png", "day1/scans/deep/c.pdf"]);
    expect(r.bytes).toBe(6 + 5 + 6);
    expect(r.skipped).toEqual(["link.pdf"]);
    expect((await objects.get("inbox", "day1/scans/deep/c.pdf")).toString()).toBe("%PDF-c");
    // The bucket is a folder of the data dir's objects/ (what the standalone service reads).
    expect(await readFile(path.join(root, "inbox", "day1", "scans", "b.png"), "utf8")).toBe("png-b");
  });
});

describe("runPutFolder", () => {
  it("copies into <data dir>/objects/<bucket>", async () => {
    const src = await sourceFolder();
    const dataDir = await tmp.make("docverify-put-data-");
    expect(await runPutFolder([src, "inbox/batch"], { DOCVERIFY_DATA_DIR: dataDir })).toBe(0);
    expect(await readFile(path.join(dataDir, "objects", "inbox", "batch", "a.pdf"), "utf8")).toBe("%PDF-a");
  });

  it("fails with a reason for a missing folder, a bad bucket name and wrong arguments", async () => {
    const dataDir = await tmp.make("docverify-put-data-");
    const env = { DOCVERIFY_DATA_DIR: dataDir };
    expect(await runPutFolder([path.join(dataDir, "nope"), "inbox"], env)).toBe(1);
    expect(await runPutFolder([await sourceFolder(), "../escape"], env)).toBe(1);
    expect(await runPutFolder(["only-one"], env)).toBe(2);
  });
});
