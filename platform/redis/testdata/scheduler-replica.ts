/**
 * A scheduler replica in its own process, for the crash test: submits the keys given, prints
 * `admitted <key>` for each admission, and runs until killed.
 * Usage: scheduler-replica.ts <redis-url> <queue> <capacity> <lockDurationMs> <stalledIntervalMs> <key>...
 */
import { pino } from "pino";
import { createRedisScheduler } from "../scheduler.js";

const [url, queueName, capacity, lockDurationMs, stalledIntervalMs, ...keys] = process.argv.slice(2);
if (!url || !queueName || !capacity || !lockDurationMs || !stalledIntervalMs) {
  process.stderr.write(
    "usage: scheduler-replica.ts <redis-url> <queue> <capacity> <lockMs> <stalledMs> <key>...\n",
  );
  process.exit(2);
}
const scheduler = createRedisScheduler({
  connection: url,
  queueName,
  capacity: Number(capacity),
  lockDurationMs: Number(lockDurationMs),
  stalledIntervalMs: Number(stalledIntervalMs),
  log: pino({ level: "silent" }),
});
scheduler.onAdmitted((key) => process.stdout.write(`admitted ${key}\n`));
for (const key of keys) await scheduler.submit(key, "interactive");
process.stdout.write("submitted\n");
