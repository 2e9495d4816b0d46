/** Rewrites the generated table of finding codes in docs/calibration.md (`npm run gen:codes`). */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { withCodeTable } from "./code-table.js";

const file = path.resolve(import.meta.dirname, "../../docs/calibration.md");
await writeFile(file, withCodeTable(await readFile(file, "utf8")));
process.stdout.write(`wrote the finding codes of ${path.relative(process.cwd(), file)}\n`);
