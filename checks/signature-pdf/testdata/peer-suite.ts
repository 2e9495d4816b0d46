import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/**
 * pyHanko's test PDFs (MIT), kept outside the repository in the shared data folder that CI places beside
 * the clone (`../shared/peer-suites/pyhanko`); DOCVERIFY_SHARED_DIR points elsewhere when needed.
 * The files are read in place, never copied into the repository.
 */

const repoRoot = path.resolve(import.meta.dirname, "../../..");

export function sharedDir(): string {
  return process.env.DOCVERIFY_SHARED_DIR ?? path.resolve(repoRoot, "../shared");
}

export function pyhankoDir(): string {
  return path.join(sharedDir(), "peer-suites", "pyhanko");
}

export interface SignedExpectation {
  file: string;
  expected_integrity: "intact" | "altered";
  why: string;
}

/** Why the suite cannot run, or undefined when it can. */
export function pyhankoMissing(): string | undefined {
  const file = path.join(pyhankoDir(), "expectations.json");
  return existsSync(file)
    ? undefined
    : `pyHanko's peer suite is not at ${file} (CI has ../shared beside the clone; set DOCVERIFY_SHARED_DIR otherwise)`;
}

export function signedExpectations(): SignedExpectation[] {
  return JSON.parse(readFileSync(path.join(pyhankoDir(), "expectations.json"), "utf8")).signed;
}

/** Every PDF of the suite, as paths relative to its folder. */
export function allPdfs(): string[] {
  const root = pyhankoDir();
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d).sort()) {
      const p = path.join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.toLowerCase().endsWith(".pdf")) out.push(path.relative(root, p));
    }
  };
  walk(root);
  return out;
}

export function readPdf(file: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(pyhankoDir(), file)));
}
