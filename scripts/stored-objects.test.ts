import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The service's JSON objects in its object store (step results, the evidence manifest, archive records and
 * verdicts, upload reservations) are read and written only through core/stored.ts (`readStored`,
 * `writeStored` and the kinds declared with `defineStored`), so each is validated by its schema in one
 * place and a damaged one is a value (`invalid`), never an exception of a hand-written JSON.parse. This
 * fails when product code parses what it read from an object store, or stringifies what it puts there.
 */
const root = path.resolve(import.meta.dirname, "..");
const PRODUCT = ["core", "document", "prepare", "checks", "agent", "api", "operator", "platform", "bin"];
/** Files allowed to: the reader/writer itself, and the batch report written for the client (never read back). */
const ALLOWED = new Set(["core/stored.ts", "operator/job-report.ts"]);

/** An object store read or write: `objects.get(`, `ctx.objects.put(`, `.get(bucket, …`, `.getStream(…`. */
const STORE_CALL = /\bobjects\.(get|getStream|put)\(|\.(get|put)\(\s*(ctx\.|deps\.|opts\.)?bucket\b/;

function productFiles(): string[] {
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "*.ts"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter(
      (f) =>
        f &&
        PRODUCT.includes(f.split("/")[0]!) &&
        !f.endsWith(".test.ts") &&
        !f.split("/").includes("testdata") &&
        !f.startsWith("platform/"),
    );
}

describe("stored JSON objects go through core/stored.ts", () => {
  it("no product file parses an object it read, or stringifies one it stores, by hand", () => {
    const offenders: string[] = [];
    for (const file of productFiles()) {
      if (ALLOWED.has(file)) continue;
      let src: string;
      try {
        src = readFileSync(path.join(root, file), "utf8");
      } catch {
        continue; // deleted in the work tree
      }
      if (!STORE_CALL.test(src)) continue;
      // A statement that both talks to the object store and (de)serialises JSON.
      for (const stmt of src.split(/;\s*\n/)) {
        if (STORE_CALL.test(stmt) && /JSON\.(parse|stringify)\(/.test(stmt)) {
          offenders.push(`${file}: ${stmt.trim().split("\n")[0]}`);
        }
      }
      // A file that reads objects and JSON.parses anything reads a stored object by hand.
      if (/\bobjects\.get\(/.test(src) && /JSON\.parse\(/.test(src)) offenders.push(`${file}: JSON.parse`);
    }
    expect(offenders).toEqual([]);
  });
});
