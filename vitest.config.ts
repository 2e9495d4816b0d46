import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "{core,api,operator,prepare,document,checks,agent,platform,bin,fixtures,scripts,bench}/**/*.test.ts",
          ],
          // A guard against a hung test, not a speed limit: on a loaded 2-core machine (CI runs the e2e
          // suites beside these) the heaviest units (OCR, hostile PDFs) take 20 s and more.
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
          globalSetup: ["e2e/global-setup.ts"],
        },
      },
    ],
  },
});
