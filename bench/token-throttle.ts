/**
 * `npm run bench:token`: how long a legitimate client waits for POST /token while 16 connections guess
 * client secrets, against the standalone service (`node dist/bin/docverify.js standalone`, real scrypt
 * cost). Prints a table; asserts nothing.
 *
 * Scenarios (each on a fresh service):
 * - no attack: the cost of one verification on this machine, for reference;
 * - known client: the integrator authenticated from its address before the attack (token renewal);
 * - first contact: every request of the legitimate client comes from an address it never used, for a
 *   client id the attackers do not guess (served round-robin) and for the one they guess (refused by
 *   design while that id is blocked: docs/decisions.md, "Throttling");
 * - one attacking address: the 16 connections share one address;
 * - gate only: failure counting off (DOCVERIFY_TOKEN_MAX_FAILURES_PER_* = 0): only the bounded,
 *   fair verification gate protects the known client.
 * The attackers run from 127.0.0.2-17 (any 127/8 address is loopback), half guessing the legitimate
 * client's secret, half guessing unknown client ids, never waiting for Retry-After; the legitimate client
 * from 127.0.0.1 (127.0.x.y for first contact) makes requests one at a time, in two phases: while the
 * attack starts (until every attacking connection has been refused once; at most BENCH_TOKEN_REQUESTS),
 * then BENCH_TOKEN_REQUESTS more once they all have been (a build without throttling has only phase 1).
 *
 * BENCH_TOKEN_ENTRY=/path/to/other/dist/bin/docverify.js measures another build (e.g. main before the
 * throttling) with the same load: `git archive main | tar -x -C /tmp/before`, link node_modules, build.
 */
import os from "node:os";
import { Agent, request } from "undici";
import { CLIENTS, type Service, startService, type TestClient } from "../e2e/harness.js";

const REQUESTS = Number(process.env.BENCH_TOKEN_REQUESTS ?? 40);
const ATTACKERS = 16;
const ENTRY = process.env.BENCH_TOKEN_ENTRY || undefined;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function tokenRequest(svc: Service, dispatcher: Agent, id: string, secret: string): Promise<number> {
  const res = await request(`${svc.url}/token`, {
    method: "POST",
    dispatcher,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: id,
      client_secret: secret,
    }).toString(),
  });
  await res.body.dump();
  return res.statusCode;
}

interface Scenario {
  name: string;
  /** The legitimate client (default CLIENTS.full, whose secret half the attackers guess). */
  client?: TestClient;
  /** Attacking connections (default 16). */
  attackers?: number;
  env?: Record<string, string>;
  /** The attackers' source address, by connection index. */
  attackerAddress: (i: number) => string;
  /** The legitimate client's source address, by request index. */
  legitAddress: (n: number) => string;
  /** Whether the legitimate client authenticates once before the attack. */
  warm: boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: "no attack (one verification)",
    attackers: 0,
    attackerAddress: () => "127.0.0.2",
    legitAddress: () => "127.0.0.1",
    warm: true,
  },
  {
    name: "known client, 16 attacking addresses",
    attackerAddress: (i) => `127.0.0.${i + 2}`,
    legitAddress: () => "127.0.0.1",
    warm: true,
  },
  {
    name: "first contact, another client id, 16 attacking addresses",
    client: CLIENTS.other,
    attackerAddress: (i) => `127.0.0.${i + 2}`,
    legitAddress: (n) => `127.0.${1 + Math.floor(n / 250)}.${(n % 250) + 1}`,
    warm: false,
  },
  {
    name: "first contact, the attacked client id (refused by design)",
    attackerAddress: (i) => `127.0.0.${i + 2}`,
    legitAddress: (n) => `127.0.${5 + Math.floor(n / 250)}.${(n % 250) + 1}`,
    warm: false,
  },
  {
    name: "known client, 1 attacking address",
    attackerAddress: () => "127.0.0.2",
    legitAddress: () => "127.0.0.1",
    warm: true,
  },
  {
    name: "known client, failure counting off (gate only)",
    env: { DOCVERIFY_TOKEN_MAX_FAILURES_PER_ADDRESS: "0", DOCVERIFY_TOKEN_MAX_FAILURES_PER_CLIENT: "0" },
    attackerAddress: (i) => `127.0.0.${i + 2}`,
    legitAddress: () => "127.0.0.1",
    warm: true,
  },
];

async function run(s: Scenario) {
  const svc = await startService({ env: { DOCVERIFY_LOG_LEVEL: "error", ...s.env }, entry: ENTRY });
  const legit = s.client ?? CLIENTS.full;
  const target = CLIENTS.full;
  const agents = new Map<string, Agent>();
  const agentFor = (address: string) => {
    let a = agents.get(address);
    if (!a) {
      a = new Agent({ connections: 1, localAddress: address });
      agents.set(address, a);
    }
    return a;
  };
  try {
    if (s.warm) await tokenRequest(svc, agentFor(s.legitAddress(0)), legit.client_id, legit.client_secret);
    let stopped = false;
    const attackerStatuses = new Map<number, number>();
    let attackerRequests = 0;
    const refused = Array.from({ length: s.attackers ?? ATTACKERS }, () => false);
    const attackStart = performance.now();
    const attack = Promise.all(
      refused.map(async (_, i) => {
        const agent = new Agent({ connections: 1, localAddress: s.attackerAddress(i) });
        for (let n = 0; !stopped; n++) {
          const id = i % 2 === 0 ? target.client_id : `guess-${i}-${n}`;
          const status = await tokenRequest(svc, agent, id, `wrong-${i}-${n}`).catch(() => 0);
          if (status === 429) refused[i] = true;
          attackerStatuses.set(status, (attackerStatuses.get(status) ?? 0) + 1);
          attackerRequests++;
        }
        await agent.close();
      }),
    );
    // Phase 1: from the attack's start until every attacking connection has been refused once (at most
    // REQUESTS requests; a build without throttling never gets there). Phase 2: REQUESTS more requests.
    const phases: number[][] = [[], []];
    const legitStatuses = new Map<number, number>();
    let n = 0;
    const measure = async (into: number[]) => {
      const t0 = performance.now();
      const status = await tokenRequest(
        svc,
        agentFor(s.legitAddress(n++)),
        legit.client_id,
        legit.client_secret,
      );
      into.push(performance.now() - t0);
      legitStatuses.set(status, (legitStatuses.get(status) ?? 0) + 1);
    };
    while (!refused.every(Boolean) && phases[0]!.length < REQUESTS) await measure(phases[0]!);
    if (refused.every(Boolean)) while (phases[1]!.length < REQUESTS) await measure(phases[1]!);
    stopped = true;
    await attack;
    const seconds = Math.max(0.001, (performance.now() - attackStart) / 1000);
    const fmt = (m: Map<number, number>) =>
      [...m.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([k, v]) => `${k}×${v}`)
        .join(" ");
    const figures = (l: number[]) => {
      if (l.length === 0) return "—";
      const sorted = [...l].sort((a, b) => a - b);
      return `${pct(sorted, 50).toFixed(0)} / ${pct(sorted, 95).toFixed(0)} ms (n=${l.length})`;
    };
    return {
      starting: figures(phases[0]!),
      refused: figures(phases[1]!),
      legit: fmt(legitStatuses),
      attackers: attackerRequests
        ? `${fmt(attackerStatuses)} (${(attackerRequests / seconds).toFixed(0)} req/s)`
        : "none",
    };
  } finally {
    for (const a of agents.values()) await a.close();
    await svc.dispose();
  }
}

async function main() {
  const rows: string[][] = [];
  for (const s of SCENARIOS) {
    if (ENTRY && s.env) continue; // another build may not know these settings
    const r = await run(s);
    rows.push([s.name, r.starting, r.refused, r.legit, r.attackers]);
  }
  const head = [
    "scenario",
    "legit p50 / p95, attack starting",
    "legit p50 / p95, attackers refused",
    "legit answers",
    "attacker answers",
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |\n`;
  process.stdout.write(
    `\nPOST /token under ${ATTACKERS} attacking connections — ${os.cpus().length} cores, Node ${process.version}` +
      `${ENTRY ? `, build ${ENTRY}` : ""}; legitimate requests one at a time, at most ${REQUESTS} per phase\n\n`,
  );
  process.stdout.write(line(head));
  process.stdout.write(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|\n`);
  for (const r of rows) process.stdout.write(line(r));
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`);
  process.exit(1);
});
