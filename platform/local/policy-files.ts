import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { type DetectionPolicy, detectionPolicyResource } from "../../core/detection-policy.js";
import { isStoreError, type ResourceStore } from "../../core/ports.js";
import { OBJECT_NAME_RE } from "../../core/resource.js";
import type { Logger } from "../../core/step-context.js";

/**
 * Standalone policies (issue 26, docs/tuning.md): DOCVERIFY_POLICIES names a policy file or a directory of
 * them (`*.json`, `*.yaml`, `*.yml`, one policy each: `name`, `version`, and the rest of core/policy.ts).
 * Each file's content is written to the local DetectionPolicy store, where the operator's policy reconciler
 * validates it like a custom resource: an invalid policy is logged with the field that is wrong, and the
 * version in force stays. A file that is not JSON/YAML or names no valid policy name is logged here and left
 * out (the resource keeps its last content). The files are read again every `reloadSeconds`; a file whose
 * text did not change is not written again.
 */
export function createPolicyFiles(opts: {
  path: string;
  store: ResourceStore<DetectionPolicy>;
  log: Logger;
  reloadSeconds: number;
}) {
  const seen = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  async function files(): Promise<string[]> {
    const s = await stat(opts.path);
    if (!s.isDirectory()) return [opts.path];
    return (await readdir(opts.path))
      .filter((f) => /\.(json|ya?ml)$/i.test(f) && !f.startsWith("."))
      .sort()
      .map((f) => path.join(opts.path, f));
  }

  async function loadFile(file: string): Promise<void> {
    const text = await readFile(file, "utf8");
    if (seen.get(file) === text) return;
    seen.set(file, text);
    let doc: unknown;
    try {
      doc = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
    } catch (err) {
      opts.log.error(
        { file, problem: err instanceof Error ? err.message.split("\n")[0] : String(err) },
        "policy file refused: it is not valid JSON or YAML; the version in force stays",
      );
      return;
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      opts.log.error(
        { file },
        "policy file refused: it must hold one policy object; the version in force stays",
      );
      return;
    }
    const { name, ...spec } = doc as Record<string, unknown>;
    if (typeof name !== "string" || !OBJECT_NAME_RE.test(name)) {
      opts.log.error(
        { file, field: "name" },
        "policy file refused: name must be a lowercase DNS label (the name clients give as their policy); the version in force stays",
      );
      return;
    }
    const current = await opts.store.get(name);
    try {
      if (!current) await opts.store.create(detectionPolicyResource(name, spec));
      else if (JSON.stringify(current.spec) !== JSON.stringify(spec))
        await opts.store.update({ ...current, spec });
    } catch (err) {
      if (isStoreError(err, "Conflict") || isStoreError(err, "AlreadyExists")) {
        seen.delete(file); // try again on the next pass
        return;
      }
      throw err;
    }
    opts.log.info({ file, policy: name }, "policy file read");
  }

  /** One pass over the files (every error logged, none thrown). */
  async function sync(): Promise<void> {
    let list: string[];
    try {
      list = await files();
    } catch (err) {
      opts.log.error(
        { path: opts.path, problem: err instanceof Error ? err.message : String(err) },
        "the policies path (DOCVERIFY_POLICIES) cannot be read",
      );
      return;
    }
    for (const file of list) {
      try {
        await loadFile(file);
      } catch (err) {
        opts.log.error(
          { file, problem: err instanceof Error ? err.message : String(err) },
          "policy file could not be read",
        );
      }
    }
  }

  return {
    sync,
    /** Reads the files once (before the service answers), then again every `reloadSeconds`. */
    async start(): Promise<void> {
      await sync();
      timer = setInterval(() => {
        running ??= sync().finally(() => {
          running = undefined;
        });
      }, opts.reloadSeconds * 1000);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
