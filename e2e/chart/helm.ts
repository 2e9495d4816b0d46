import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { testClusterBinDir } from "../cluster/test-cluster.js";

/**
 * Runs helm and kubectl from the test cluster's cache bin folder (scripts/fetch-kube-tools.sh) and parses
 * what `helm template` renders.
 */

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const CHART_DIR = path.join(REPO_ROOT, "charts/docverify");

export const helmBin = () => path.join(testClusterBinDir(), "helm");
export const kubectlBin = () => path.join(testClusterBinDir(), "kubectl");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit (the caller asserts on `code`). */
export function run(
  file: string,
  args: string[],
  opts: { input?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...opts.env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") {
          reject(new Error(`${path.basename(file)} ${args.join(" ")} could not run: ${err.message}`));
          return;
        }
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Helm's own environment: caches and config in a temp dir, never the user's. */
export function helmEnv(home: string): Record<string, string> {
  return {
    HELM_CACHE_HOME: path.join(home, "cache"),
    HELM_CONFIG_HOME: path.join(home, "config"),
    HELM_DATA_HOME: path.join(home, "data"),
  };
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are checked field by field
  [key: string]: any;
}

/** Every non-empty document of a multi-document YAML stream; a YAML error throws. */
export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value = doc.toJS() as K8sObject | null;
    if (value) objects.push(value);
  }
  return objects;
}

export interface RenderOptions {
  valuesFiles?: string[];
  set?: string[];
  namespace?: string;
  release?: string;
  showOnly?: string;
  env?: Record<string, string>;
}

export function templateArgs(opts: RenderOptions): string[] {
  const args = [
    "template",
    opts.release ?? "docverify",
    CHART_DIR,
    "--namespace",
    opts.namespace ?? "docverify",
  ];
  for (const f of opts.valuesFiles ?? []) args.push("--values", f);
  for (const s of opts.set ?? []) args.push("--set", s);
  if (opts.showOnly) args.push("--show-only", opts.showOnly);
  return args;
}

/** `helm template` → its raw text; throws with helm's message when rendering fails. */
export async function renderText(opts: RenderOptions): Promise<string> {
  const r = await run(helmBin(), templateArgs(opts), { env: opts.env });
  if (r.code !== 0) throw new Error(`helm template failed: ${r.stderr.trim()}`);
  return r.stdout;
}

export async function render(opts: RenderOptions): Promise<K8sObject[]> {
  return parseManifests(await renderText(opts));
}

/** The scenario values files, charts/docverify/ci/*-values.yaml. */
export function scenarioFiles(): string[] {
  return readdirSync(path.join(CHART_DIR, "ci"))
    .filter((f) => f.endsWith("-values.yaml"))
    .sort()
    .map((f) => path.join(CHART_DIR, "ci", f));
}

export const scenarioName = (file: string) => path.basename(file, "-values.yaml");
