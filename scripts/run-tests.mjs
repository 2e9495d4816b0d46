#!/usr/bin/env node
// `npm test`: type-check, then every vitest suite (unit + e2e), then one plain closing line
// `N passed, N failed, N skipped` that CI reads. Under CI=true a skipped test or suite fails the run,
// because a skip there means a prerequisite that `npm run test:setup` should have installed is missing.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const ci = /^(1|true|yes)$/i.test(process.env.CI ?? "");
const extra = process.argv.slice(2);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...opts });
  return r.status ?? 1;
}

let failedStages = 0;
process.stdout.write("== typecheck (tsc --noEmit)\n");
if (
  run(process.execPath, [
    path.join(root, "node_modules/typescript/bin/tsc"),
    "-p",
    "tsconfig.json",
    "--noEmit",
  ]) !== 0
) {
  process.stdout.write("typecheck failed\n");
  failedStages++;
}
process.stdout.write("== lint (biome lint)\n");
if (
  run(process.execPath, [
    path.join(root, "node_modules/@biomejs/biome/bin/biome"),
    "lint",
    "--diagnostic-level=error",
    ".",
  ]) !== 0
) {
  process.stdout.write("lint failed\n");
  failedStages++;
}

const reportDir = path.join(root, ".vitest-reports");
const report = path.join(reportDir, "results.json");
mkdirSync(reportDir, { recursive: true });
rmSync(report, { force: true });
process.stdout.write("== vitest (unit + e2e)\n");
const code = run(process.execPath, [
  path.join(root, "node_modules/vitest/vitest.mjs"),
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...extra,
]);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, "utf8"));
  passed = r.numPassedTests ?? 0;
  failed = r.numFailedTests ?? 0;
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A suite that failed to load counts as a failure even when no test in it ran.
  for (const file of r.testResults ?? []) {
    if (file.status === "failed" && (file.assertionResults ?? []).every((a) => a.status !== "failed"))
      failed++;
  }
} else if (code !== 0) {
  failed++;
}
failed += failedStages;

let exit = code !== 0 || failed > 0 ? 1 : 0;
if (ci && skipped > 0) {
  process.stdout.write(
    `CI=true: ${skipped} test(s) were skipped because a prerequisite is missing; run \`npm run test:setup\`.\n`,
  );
  exit = 1;
}
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(exit);
