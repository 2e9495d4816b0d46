/**
 * Writes crds/*.yaml, and the Helm chart's identical copy in charts/docverify/files/crds/, from core's zod
 * schemas (`npm run gen:crds`). Run it after changing core/detection.ts or core/detection-job.ts;
 * scripts/crds/crd-manifests.test.ts and the chart tests fail while the files are stale.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { allCrds, renderCrdFile } from "./crds/crd-manifests.js";

const root = path.resolve(import.meta.dirname, "..");
for (const dir of ["crds", "charts/docverify/files/crds"]) {
  for (const [file, crd] of Object.entries(allCrds())) {
    await writeFile(path.join(root, dir, file), renderCrdFile(crd));
    process.stdout.write(`wrote ${dir}/${file}\n`);
  }
}
