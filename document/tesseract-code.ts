import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Keeps tesseract's WebAssembly machine code warm in this process. Every tesseract.js worker compiles the same
 * core module; V8 shares one compiled copy among the threads of a process while a thread holds it, including the
 * optimised code it tiers up to while recognising (~0.8 s of one core the first time on a passport page's
 * visual zone, issue 22). Each document still gets a fresh engine (no tesseract state is shared); only the
 * compiled code outlives it, for the next document a warm step process reads. The keeper is one idle thread
 * that instantiated the core and does nothing else; it never holds the process open (`unref`).
 */

const require = createRequire(import.meta.url);
let keeper: Worker | undefined;

// The core chosen as tesseract.js's own worker chooses it: its getCore, called with what createWorker sends for
// an LSTM-only engine (`lstmOnly: true`). Dynamic imports only: the code runs as CommonJS or as a module,
// whichever the process's flags make of an evaluated worker.
const KEEPER = `
(async () => {
  const { workerData } = await import("node:worker_threads");
  const { default: getCore } = await import(workerData.getCore);
  const Core = await getCore(true, undefined, { progress() {} });
  globalThis.keptCore = await Core({});
  setInterval(() => undefined, 1 << 30);
})().catch(() => process.exit(0));
`;

/** Starts the keeper once per process (a no-op after the first call). */
export function keepTesseractCodeWarm(): void {
  if (keeper) return;
  const getCore = pathToFileURL(require.resolve("tesseract.js/src/worker-script/node/getCore.js")).href;
  keeper = new Worker(KEEPER, { eval: true, workerData: { getCore } });
  keeper.on("error", () => undefined);
  keeper.unref();
}

/** Whether the keeper thread was started and still runs (for tests). */
export function tesseractCodeKept(): boolean {
  return keeper !== undefined && keeper.threadId > 0;
}
