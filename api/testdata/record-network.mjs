// Preloaded with --import into a process that must not use the network (e.g. the Redocly CLI in
// api/openapi.test.ts): every way out is refused and reported on stderr as "NETWORK ATTEMPT <what>", so a
// caller that swallows the error still leaves a trace the test reads.
import dns from "node:dns";
import net from "node:net";

const refuse = (what) =>
  function refused() {
    process.stderr.write(`NETWORK ATTEMPT ${what}\n`);
    throw new Error(`network access attempted (${what}) in a process that forbids it`);
  };
net.Socket.prototype.connect = refuse("net.Socket.connect");
dns.lookup = refuse("dns.lookup");
dns.promises.lookup = refuse("dns.promises.lookup");
globalThis.fetch = refuse("fetch");
process.stderr.write("network recorder active\n");
