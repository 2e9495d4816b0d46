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
          testTimeout: 30_000,
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
