import { spawnSync } from "node:child_process";
import path from "node:path";

/** Builds dist/ once so the e2e suites run the service exactly as `npm start` does. */
export default function setup(): void {
  const root = path.resolve(import.meta.dirname, "..");
  const tsc = path.join(root, "node_modules/typescript/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error("e2e: building dist/ with tsc failed");
}
