/**
 * Child process of the resource-store crash test: `node --import tsx store-writer.ts <dir>` runs the
 * deterministic write loop of store-ops.ts forever and prints `ack <i>` once operation i is acknowledged.
 */
import { openLocalResourceStore } from "../resource-store.js";
import { applyOp, type Counter, type CounterModel, counterOp } from "./store-ops.js";

const dir = process.argv[2];
if (!dir) throw new Error("usage: store-writer.ts <dir>");
const store = await openLocalResourceStore<Counter>({ dir, kind: "Counter" });
const model: CounterModel = new Map();
for (let i = 0; ; i++) {
  const op = counterOp(i, model);
  if (op.type === "create") {
    await store.create({
      apiVersion: "test.io/v1",
      kind: "Counter",
      metadata: { name: op.name },
      spec: { n: op.n },
    });
  } else if (op.type === "delete") {
    await store.delete(op.name);
  } else {
    const cur = (await store.get(op.name))!;
    if (op.type === "update") await store.update({ ...cur, spec: { n: op.n } });
    else await store.updateStatus({ ...cur, status: { n: op.n } });
  }
  applyOp(model, op);
  process.stdout.write(`ack ${i}\n`);
}
