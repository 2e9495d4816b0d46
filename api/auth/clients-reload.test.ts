import { mkdir, mkdtemp, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_SCRYPT_COST } from "../testdata/app-kit.js";
import { ClientsFileError } from "./clients.js";
import { type ReloadingClientRegistry, watchClientsFile } from "./clients-reload.js";

const client = (id: string, scopes = ["DocumentVerification:detections:get"]) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  scopes,
});
const fileOf = (...clients: object[]) => JSON.stringify({ clients });

/** Resolves once `ready()` holds; a generous guard fails the test instead of hanging. */
async function until(ready: () => boolean, what: string): Promise<void> {
  const guard = Date.now() + 30_000;
  while (!ready()) {
    if (Date.now() > guard) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let dir: string;
let file: string;
let lines: { level: number; msg: string }[];
let reloads: boolean[];
let registry: ReloadingClientRegistry | undefined;
const log = () => pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
const open = (opts: { watch?: boolean; pollMs?: number } = {}) =>
  watchClientsFile(file, {
    log: log(),
    cost: TEST_SCRYPT_COST,
    pollMs: opts.pollMs ?? 60_000,
    watch: opts.watch,
    onReload: (ok) => reloads.push(ok),
  }).then((r) => {
    registry = r;
    return r;
  });

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "clients-reload-"));
  file = path.join(dir, "clients.json");
  lines = [];
  reloads = [];
  await writeFile(file, fileOf(client("a"), client("b")));
});
afterEach(async () => {
  registry?.close();
  registry = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe("clients file reload", () => {
  it("picks up an edit through fs.watch: added, removed and changed clients", async () => {
    const reg = await open();
    expect(reg.ids().sort()).toEqual(["a", "b"]);
    await writeFile(file, fileOf(client("a", ["DocumentVerification:*"]), client("c")));
    await until(() => reg.ids().includes("c"), "the watch reloads the file");
    expect(reg.ids().sort()).toEqual(["a", "c"]);
    expect(reg.get("b")).toBeUndefined();
    expect(reg.get("a")?.scopes).toEqual(["DocumentVerification:*"]);
    expect((await reg.verify("c", "c-secret"))?.client_id).toBe("c");
    expect(await reg.verify("b", "b-secret")).toBeUndefined();
    const info = lines.find((l) => l.msg === "reloaded the clients file") as unknown as {
      added: string[];
      removed: string[];
    };
    expect(info).toMatchObject({ added: ["c"], removed: ["b"] });
    expect(reloads).toEqual([true]);
  });

  it("reads the file periodically when no watch event comes", async () => {
    const reg = await open({ watch: false, pollMs: 50 });
    await writeFile(file, fileOf(client("z")));
    await until(() => reg.ids().includes("z"), "the periodic read reloads the file");
    expect(reg.ids()).toEqual(["z"]);
  });

  it("keeps the clients in use and logs an error when the new file is malformed, then takes a fixed one", async () => {
    const reg = await open({ watch: false });
    for (const broken of [
      "{not json",
      JSON.stringify({ clients: [{ client_id: "a", scopes: [] }] }), // no secret
      fileOf(client("a"), client("a")), // duplicate id
    ]) {
      await writeFile(file, broken);
      expect(await reg.reload()).toBe(false);
      expect(reg.ids().sort()).toEqual(["a", "b"]);
      expect((await reg.verify("b", "b-secret"))?.client_id).toBe("b");
    }
    const errors = lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(3);
    expect(errors[0]!.msg).toMatch(/not valid; the 2 clients loaded before stay in use/);
    // The same broken content is not reported again.
    expect(await reg.reload()).toBe(false);
    expect(lines.filter((l) => l.level === 50)).toHaveLength(3);
    await writeFile(file, fileOf(client("b")));
    expect(await reg.reload()).toBe(true);
    expect(reg.ids()).toEqual(["b"]);
    expect(reloads).toEqual([false, false, false, true]);
  });

  it("keeps the clients in use while the file is missing", async () => {
    const reg = await open({ watch: false });
    await unlink(file);
    expect(await reg.reload()).toBe(false);
    expect(reg.ids().sort()).toEqual(["a", "b"]);
    expect(lines.some((l) => l.level === 50 && /cannot be read \(ENOENT\)/.test(l.msg))).toBe(true);
  });

  it("follows a Kubernetes Secret volume update (the ..data link swapped to a new folder)", async () => {
    // What the kubelet lays out: clients.json -> ..data/clients.json, ..data -> ..<timestamp>/
    const mount = path.join(dir, "mount");
    await mkdir(path.join(mount, "..v1"), { recursive: true });
    await writeFile(path.join(mount, "..v1", "clients.json"), fileOf(client("old")));
    await symlink("..v1", path.join(mount, "..data"));
    await symlink("..data/clients.json", path.join(mount, "clients.json"));
    file = path.join(mount, "clients.json");
    const reg = await open();
    expect(reg.ids()).toEqual(["old"]);
    await mkdir(path.join(mount, "..v2"));
    await writeFile(path.join(mount, "..v2", "clients.json"), fileOf(client("new")));
    await symlink("..v2", path.join(mount, "..data_tmp"));
    await rename(path.join(mount, "..data_tmp"), path.join(mount, "..data"));
    await rm(path.join(mount, "..v1"), { recursive: true });
    await until(() => reg.ids().includes("new"), "the watch sees the swapped link");
    expect(reg.ids()).toEqual(["new"]);
  });

  it("refuses to start on a file it cannot use, naming it", async () => {
    await writeFile(file, "{");
    await expect(open()).rejects.toBeInstanceOf(ClientsFileError);
    await expect(open()).rejects.toThrow(file);
  });

  it("warns about scopes the service does not know", async () => {
    await writeFile(
      file,
      fileOf(client("a", ["DocumentVerification:detections:get", "DocumentVerification:detections:craete"])),
    );
    await open({ watch: false });
    expect(lines.some((l) => l.level === 40 && /craete/.test(l.msg))).toBe(true);
  });
});

describe("onChange (credential revocation)", () => {
  it("is told who was added and removed before they are in use; when it fails the old clients stay and it is asked again", async () => {
    await writeFile(file, fileOf(client("a"), client("b")));
    const changes: { added: string[]; removed: string[] }[] = [];
    let fail = true;
    registry = await watchClientsFile(file, {
      log: log(),
      cost: TEST_SCRYPT_COST,
      pollMs: 60_000,
      watch: false,
      onReload: (ok) => reloads.push(ok),
      onChange: async (change) => {
        changes.push(change);
        if (fail) throw new Error("object store down");
      },
    });
    await writeFile(file, fileOf(client("a"), client("c")));
    expect(await registry.reload()).toBe(false);
    expect(registry.ids().sort()).toEqual(["a", "b"]);
    fail = false;
    expect(await registry.reload()).toBe(true);
    expect(registry.ids().sort()).toEqual(["a", "c"]);
    expect(changes).toEqual([
      { added: ["c"], removed: ["b"] },
      { added: ["c"], removed: ["b"] },
    ]);
    expect(reloads).toEqual([false, true]);
  });

  it("a removed client is gone for tokens while its removal is being recorded (its old tokens are refused already)", async () => {
    await writeFile(file, fileOf(client("a"), client("b")));
    let release: () => void = () => undefined;
    let recording = false;
    registry = await watchClientsFile(file, {
      log: log(),
      cost: TEST_SCRYPT_COST,
      pollMs: 60_000,
      watch: false,
      onChange: async () => {
        recording = true;
        await new Promise<void>((r) => {
          release = r;
        });
      },
    });
    const r = registry;
    expect(await r.verify("b", "b-secret")).toBeDefined();
    await writeFile(file, fileOf(client("a")));
    const reloaded = r.reload();
    await until(() => recording, "the removal is being recorded");
    expect(await r.verify("b", "b-secret")).toBeUndefined();
    expect(r.get("b")).toBeUndefined();
    expect(r.fingerprint("b")).toBeUndefined();
    expect(r.ids()).toEqual(["a"]);
    expect(await r.verify("a", "a-secret")).toBeDefined();
    release();
    expect(await reloaded).toBe(true);
    expect(await r.verify("b", "b-secret")).toBeUndefined();
  });

  it("a client's fingerprint changes with its secret and with nothing else", async () => {
    await writeFile(file, fileOf(client("a")));
    registry = await open();
    const first = registry.fingerprint("a");
    await writeFile(file, fileOf(client("a", ["DocumentVerification:*"])));
    expect(await registry.reload()).toBe(true);
    expect(registry.fingerprint("a")).toBe(first);
    await writeFile(file, fileOf({ ...client("a"), client_secret: "rotated" }));
    expect(await registry.reload()).toBe(true);
    expect(registry.fingerprint("a")).not.toBe(first);
    expect(registry.fingerprint("nobody")).toBeUndefined();
  });
});
