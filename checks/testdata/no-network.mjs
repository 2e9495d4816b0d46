// Preloaded with --import into a test process (and, through execArgv, into its worker threads):
// every way out to the network throws, so code that still works under it needs no network.
import dns from "node:dns";
import net from "node:net";
import { isMainThread } from "node:worker_threads";

const refuse = (what) => () => {
  throw new Error(`network access attempted (${what}) in a test that forbids it`);
};
net.Socket.prototype.connect = refuse("net.Socket.connect");
dns.lookup = refuse("dns.lookup");
dns.promises.lookup = refuse("dns.promises.lookup");
globalThis.fetch = refuse("fetch");
if (process.env.NO_NETWORK_MARKER)
  process.stderr.write(`no-network preload active (main thread: ${isMainThread})\n`);
