import type { Resource } from "../../../core/resource.js";

/** The resource the crash test writes. */
export interface Counter extends Resource {
  spec: { n: number };
  status?: { n: number };
}

export type CounterOp =
  | { type: "create"; name: string; n: number }
  | { type: "update"; name: string; n: number }
  | { type: "status"; name: string; n: number }
  | { type: "delete"; name: string };

/** What a name holds in the model: absent, or its spec and status values. */
export type CounterModel = Map<string, { spec: number; status: number | undefined }>;

/** The i-th operation of the deterministic write loop, given the state before it. */
export function counterOp(i: number, model: CounterModel): CounterOp {
  const name = `obj-${i % 10}`;
  if (!model.has(name)) return { type: "create", name, n: i };
  if (i % 7 === 6) return { type: "delete", name };
  return i % 2 === 0 ? { type: "update", name, n: i } : { type: "status", name, n: i };
}

export function applyOp(model: CounterModel, op: CounterOp): void {
  const cur = model.get(op.name);
  if (op.type === "create") model.set(op.name, { spec: op.n, status: undefined });
  else if (op.type === "delete") model.delete(op.name);
  else if (op.type === "update" && cur) cur.spec = op.n;
  else if (op.type === "status" && cur) cur.status = op.n;
}

/** The model after the first `count` operations. */
export function modelAfter(count: number): CounterModel {
  const model: CounterModel = new Map();
  for (let i = 0; i < count; i++) applyOp(model, counterOp(i, model));
  return model;
}
