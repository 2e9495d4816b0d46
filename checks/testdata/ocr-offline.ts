// Runs OCR on one image file (argv[2]) and prints {"text": ...} as JSON; used by ocr.test.ts under the
// no-network preload to prove that OCR needs nothing from the network.
import { readFile } from "node:fs/promises";
import { createOcrEngine } from "../../document/ocr.js";

const engine = await createOcrEngine();
try {
  const result = await engine.recognize(await readFile(process.argv[2] as string));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await engine.terminate();
}
