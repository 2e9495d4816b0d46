import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { buildStepPod } from "../../platform/kube/step-pod.js";
import { CHART_DIR, REPO_ROOT } from "./helm.js";

/**
 * The Dockerfile's essentials, checked without building the image (this machine has no registry for base
 * images): non-root numeric USER equal to the chart's, the ENTRYPOINT, production dependencies only in
 * the final stage, and every path it copies present in the build context.
 */

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const lines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    if (upper === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ from: m?.[1] ?? rest, name: m?.[2] ?? String(stages.length), instructions: [] });
    } else if (stages.length === 0 && upper === "ARG") {
      const [k, v = ""] = rest.split("=");
      args[k as string] = v;
    } else {
      stages.at(-1)?.instructions.push({ op: upper, args: rest });
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync(path.join(REPO_ROOT, "Dockerfile"), "utf8"));
const dockerignore = readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const finalStage = dockerfile.stages.at(-1) as Stage;
const ops = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);

/** Whether .dockerignore keeps `rel` out of the build context (the patterns this repo uses). */
function ignored(rel: string): boolean {
  return dockerignore.some((pattern) => {
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*\*\//g, "(.*/)?")
        .replace(/\*/g, "[^/]*")}(/.*)?$`,
    );
    return re.test(rel);
  });
}

describe("Dockerfile", () => {
  it("builds in stages and runs on a current Node LTS image", () => {
    expect(dockerfile.stages.map((s) => s.name)).toEqual(["build", "deps", "runtime"]);
    const base = dockerfile.args.NODE_IMAGE ?? "";
    const major = Number(/^node:(\d+)/.exec(base)?.[1]);
    expect(major % 2, `${base} is an LTS line (even major)`).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    for (const s of dockerfile.stages) expect(s.from).toMatch(/^\$\{NODE_IMAGE\}$/);
  });

  it("runs as the non-root user the chart's securityContext names", () => {
    const users = ops(finalStage, "USER");
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0] ?? "").split(":").map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    const values = parseYaml(readFileSync(path.join(CHART_DIR, "values.yaml"), "utf8"));
    expect(values.podSecurityContext.runAsUser).toBe(uid);
    expect(values.steps.runAsUser).toBe(uid);
    // USER comes after every RUN: nothing runs as root once the user is set, nothing after it as root.
    const idx = finalStage.instructions.findIndex((i) => i.op === "USER");
    expect(finalStage.instructions.slice(idx).some((i) => i.op === "RUN")).toBe(false);
  });

  it("starts `docverify <role>` through node, and puts docverify on PATH for the step Pods", () => {
    expect(ops(finalStage, "ENTRYPOINT")).toEqual(['["node", "/app/dist/bin/docverify.js"]']);
    const pod = buildStepPod(
      { name: "p", step: "check", owner: { name: "d" }, env: {}, timeoutSeconds: 1 },
      "ns",
      { image: "i" },
    );
    expect(pod.spec?.containers[0]?.command).toEqual(["docverify"]);
    expect(ops(finalStage, "RUN").join("\n")).toContain(
      "ln -s /app/dist/bin/docverify.js /usr/local/bin/docverify",
    );
    const entry = path.join(REPO_ROOT, "bin/docverify.ts");
    expect(readFileSync(entry, "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
  });

  it("ships production dependencies only in the final stage", () => {
    const installs = dockerfile.stages.flatMap((s) =>
      ops(s, "RUN")
        .filter((r) => /\bnpm (install|ci|i)\b/.test(r))
        .map((r) => ({ stage: s.name, run: r })),
    );
    expect(ops(finalStage, "RUN").some((r) => /\bnpm (install|ci|i)\b/.test(r))).toBe(false);
    const copies = ops(finalStage, "COPY");
    const nodeModules = copies.filter((c) => /node_modules/.test(c));
    expect(nodeModules).toHaveLength(1);
    const from = /--from=(\S+)/.exec(nodeModules[0] ?? "")?.[1];
    const depsInstall = installs.filter((i) => i.stage === from);
    expect(depsInstall).toHaveLength(1);
    expect(depsInstall[0]?.run).toMatch(/--omit=dev/);
    // What comes from the build stage is the compiled output, never its node_modules (dev dependencies).
    for (const c of copies.filter((x) => x.includes("--from=build"))) expect(c).not.toMatch(/node_modules/);
  });

  it("copies only paths that exist in the build context and the build output", () => {
    const build = dockerfile.stages.find((s) => s.name === "build") as Stage;
    for (const stage of dockerfile.stages) {
      for (const copy of ops(stage, "COPY").filter((c) => !c.includes("--from="))) {
        const sources = copy.split(/\s+/).slice(0, -1);
        for (const src of sources) {
          expect(existsSync(path.join(REPO_ROOT, src)), `${stage.name}: COPY ${src}`).toBe(true);
          expect(ignored(src), `${src} is excluded by .dockerignore`).toBe(false);
        }
      }
    }
    // The build stage copies every folder tsconfig.build.json compiles.
    const tsconfig = JSON.parse(readFileSync(path.join(REPO_ROOT, "tsconfig.build.json"), "utf8"));
    const copied = ops(build, "COPY").flatMap((c) => c.split(/\s+/).slice(0, -1));
    for (const dir of tsconfig.include as string[]) expect(copied, `COPY ${dir}`).toContain(dir);
    expect(ignored("node_modules")).toBe(true);
    expect(ignored("core/config.test.ts")).toBe(true);
    // COPY --from=build /src/dist → what `npm run build` produces (e2e's global setup builds it).
    const entry = path.join(REPO_ROOT, "dist/bin/docverify.js");
    expect(existsSync(entry), "dist/bin/docverify.js after `npm run build`").toBe(true);
    expect(readFileSync(entry, "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
    expect(ops(finalStage, "COPY")).toEqual(
      expect.arrayContaining([
        "--from=build /src/dist ./dist",
        "--from=deps /app/node_modules ./node_modules",
      ]),
    );
  });
});
