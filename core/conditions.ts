import type { Condition } from "./detection.js";

/**
 * Sets a condition on a list (returns a new list): keeps lastTransitionTime unless the status flips,
 * like apimachinery's meta.SetStatusCondition.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : now.toISOString();
  const cond: Condition = { ...next, lastTransitionTime };
  if (i >= 0) list[i] = cond;
  else list.push(cond);
  return list;
}

export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
