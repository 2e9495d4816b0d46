/**
 * Debian's chromium (installed by `npm run test:setup`) driven by playwright-core, for the suites that test a
 * page in a real browser: a fresh profile each run, and nothing that reaches beyond loopback (updates,
 * sync, QUIC probes).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { ROOT } from "./harness.js";

export const CHROMIUM = "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Where the suite's screenshots go (`.test-artifacts/<name>/`, gitignored). */
  artifacts: string;
  close(): Promise<void>;
}

/** A headless chromium with one page of `viewport`; screenshots under `.test-artifacts/<artifacts>/`. */
export async function launchChromium(
  artifacts: string,
  viewport: { width: number; height: number },
): Promise<Browser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), "docverify-chromium-"));
  const dir = path.join(ROOT, ".test-artifacts", artifacts);
  await mkdir(dir, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    artifacts: dir,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
