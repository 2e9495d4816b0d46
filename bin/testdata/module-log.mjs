// Preload (`node --import ./module-log.mjs …`) that records every module the process loads, for tests that
// prove which code a step process loads: ES modules through a loader hook, CommonJS modules from the
// require cache, and native addons from the process's memory map. Writes one JSON object to MODULE_LOG at
// exit: { esm: [urls], cjs: [paths], native: [paths] }. `{pid}` in MODULE_LOG becomes the process id (one
// log per process of a pool); with MODULE_LOG_SIGNAL (e.g. SIGUSR2) that signal writes it too, for a warm
// worker that is killed rather than exits.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";

const file = process.env.MODULE_LOG?.replaceAll("{pid}", String(process.pid));
const esm = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => esm.add(url));
port1.unref();
register("./module-log-hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });

function snapshot() {
  if (!file) return;
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  const native = [
    ...new Set(
      readFileSync("/proc/self/maps", "utf8")
        .split("\n")
        .map((l) => l.split(/\s+/)[5] ?? "")
        .filter((p) => p.endsWith(".node")),
    ),
  ];
  writeFileSync(file, JSON.stringify({ esm: [...esm], cjs, native }));
}
process.on("exit", snapshot);
if (process.env.MODULE_LOG_SIGNAL) process.on(process.env.MODULE_LOG_SIGNAL, snapshot);
