import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDirs } from "../fixtures/temp-dirs.js";
import { writeTerminationMessage } from "./step-command.js";

const tmp = tempDirs();
afterAll(tmp.removeAll);

describe("writeTerminationMessage", () => {
  it("replaces the content of the termination-message file the kubelet created", async () => {
    const dir = await tmp.make("docverify-termlog-");
    const file = path.join(dir, "termination-log");
    await writeFile(file, "an older and longer message than the new one");
    writeTerminationMessage(file, '{"ok":true}');
    expect(await readFile(file, "utf8")).toBe('{"ok":true}');
  });

  it("creates nothing when the file does not exist (not in a Pod)", async () => {
    const dir = await tmp.make("docverify-termlog-");
    const file = path.join(dir, "termination-log");
    writeTerminationMessage(file, '{"ok":true}');
    expect(existsSync(file)).toBe(false);
  });
});
