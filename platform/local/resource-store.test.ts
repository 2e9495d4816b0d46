import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isStoreError } from "../../core/ports.js";
import type { Resource } from "../../core/resource.js";
import { tempName } from "./atomic-file.js";
import { openLocalResourceStore } from "./resource-store.js";
import { type Counter, type CounterModel, modelAfter } from "./testdata/store-ops.js";

interface Thing extends Resource {
  spec: { size: number };
  status?: { phase: string };
}
const thing = (name: string, size = 1): Thing => ({
  apiVersion: "test.io/v1",
  kind: "Thing",
  metadata: { name },
  spec: { size },
});

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "docverify-store-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe("openLocalResourceStore", () => {
  it("keeps every object, status and deletion across a reopen", async () => {
    const dir = join(await tempDir(), "things");
    const store = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    const a = await store.create(thing("a", 1));
    await store.create(thing("b", 2));
    const a2 = await store.updateStatus({ ...a, status: { phase: "Running" } });
    await store.create({ ...thing("c"), metadata: { name: "c", finalizers: ["x/cleanup"] } });
    await store.delete("b");
    await store.delete("c");

    const reopened = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    const listed = await reopened.list();
    expect(listed.items.map((o) => o.metadata.name)).toEqual(["a", "c"]);
    expect(await reopened.get("a")).toEqual(a2);
    expect((await reopened.get("c"))?.metadata.deletionTimestamp).toBeDefined();
    expect(listed.resourceVersion).toBe("6");
    // Writes continue above the highest version seen, and stale writes still conflict.
    const a3 = await reopened.update({ ...a2, spec: { size: 5 } });
    expect(a3.metadata.resourceVersion).toBe("7");
    expect(a3.metadata.generation).toBe(2);
    await expect(reopened.update({ ...a, spec: { size: 6 } })).rejects.toSatisfy((e) =>
      isStoreError(e, "Conflict"),
    );
    expect((await readdir(dir)).sort()).toEqual(["a.json", "c.json"]);
  });

  it("shares one revision between kinds, restored from every kind's files", async () => {
    const root = await tempDir();
    const revision = { value: 0 };
    const one = await openLocalResourceStore<Thing>({ dir: join(root, "one"), kind: "One", revision });
    const two = await openLocalResourceStore<Thing>({ dir: join(root, "two"), kind: "Two", revision });
    await one.create(thing("x"));
    await two.create(thing("x"));
    await two.create(thing("y"));
    await one.create(thing("y"));
    expect(revision.value).toBe(4);

    const again = { value: 0 };
    const oneAgain = await openLocalResourceStore<Thing>({
      dir: join(root, "one"),
      kind: "One",
      revision: again,
    });
    await openLocalResourceStore<Thing>({ dir: join(root, "two"), kind: "Two", revision: again });
    expect(again.value).toBe(4);
    expect((await oneAgain.create(thing("z"))).metadata.resourceVersion).toBe("5");
  });

  it("loses nothing committed when a crash came between the temp write and the rename", async () => {
    const dir = await tempDir();
    const store = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    const a = await store.create(thing("a", 1));
    const committed = await store.update({ ...a, spec: { size: 2 } });
    // What a crash leaves when the next write of `a` reached its temp file but not its rename:
    // the temp file of a process that is gone (pid 2^22+1 is above Linux's pid_max), half written.
    const leftover = join(dir, tempName(4_194_305));
    await writeFile(leftover, JSON.stringify({ ...committed, spec: { size: 3 } }).slice(0, 40));

    const reopened = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    expect(await reopened.get("a")).toEqual(committed);
    expect(await readdir(dir)).toEqual(["a.json"]);
  });

  it("sets a corrupt file aside and loads the rest", async () => {
    const dir = await tempDir();
    const store = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    await store.create(thing("good"));
    await writeFile(join(dir, "bad.json"), "{ not json");
    await writeFile(
      join(dir, "renamed.json"),
      JSON.stringify({ ...thing("other"), metadata: { name: "other", resourceVersion: "9" } }),
    );
    await writeFile(join(dir, "notes.txt"), "not an object file");
    const warnings: object[] = [];
    const reopened = await openLocalResourceStore<Thing>({
      dir,
      kind: "Thing",
      log: { warn: (obj) => warnings.push(obj) },
    });
    expect((await reopened.list()).items.map((o) => o.metadata.name)).toEqual(["good"]);
    const files = (await readdir(dir)).sort();
    expect(files.filter((f) => f.startsWith("bad.json.corrupt-"))).toHaveLength(1);
    expect(files.filter((f) => f.startsWith("renamed.json.corrupt-"))).toHaveLength(1);
    expect(files).toContain("good.json");
    expect(files).toContain("notes.txt");
    expect(warnings).toHaveLength(2);
    // The name of a set-aside file is free again.
    await reopened.create(thing("bad"));
    expect(JSON.parse(await readFile(join(dir, "bad.json"), "utf8")).metadata.name).toBe("bad");
  });

  it("reports a write it could not persist as Unavailable and keeps the old state", async () => {
    const dir = await tempDir();
    const store = await openLocalResourceStore<Thing>({ dir, kind: "Thing" });
    const a = await store.create(thing("a"));
    await rm(dir, { recursive: true });
    const err = await store.update({ ...a, spec: { size: 9 } }).catch((e: unknown) => e);
    expect(isStoreError(err, "Unavailable")).toBe(true);
    expect((err as Error).message).toContain("check that the folder is writable");
    expect((await store.get("a"))?.spec.size).toBe(1);
  });

  it("keeps every acknowledged write when the writing process is killed with SIGKILL", async () => {
    const dir = await tempDir();
    const script = fileURLToPath(new URL("./testdata/store-writer.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script, dir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let acked = 0;
    let killed = false;
    let stderr = "";
    let buf = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      // Acknowledgements still in the pipe after the kill count too.
      for (const line of lines) {
        const m = /^ack (\d+)$/.exec(line);
        if (m) acked = Number(m[1]) + 1;
      }
      if (acked >= 150 && !killed) killed = child.kill("SIGKILL");
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("close", (_code, sig) => resolve(sig)),
    );
    expect(signal, `the writer should run until killed; stderr: ${stderr}`).toBe("SIGKILL");

    const store = await openLocalResourceStore<Counter>({ dir, kind: "Counter" });
    const actual: CounterModel = new Map(
      (await store.list()).items.map((o) => [o.metadata.name, { spec: o.spec.n, status: o.status?.n }]),
    );
    // The writer may have been killed after persisting the next write but before acknowledging it.
    const candidates = [modelAfter(acked), modelAfter(acked + 1)].map((m) => [...m.entries()].sort());
    expect(candidates).toContainEqual([...actual.entries()].sort());
    expect((await readdir(dir)).every((f) => /^obj-\d\.json$/.test(f))).toBe(true);
  });
});
