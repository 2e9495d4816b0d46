import type { Condition } from "./detection.js";

/** When a condition is set: the clock's now, and the generation of the object the pass observed. */
export interface ConditionAt {
  now: Date;
  /** `metadata.generation` the pass acted on; every condition carries it as `observedGeneration`. */
  generation: number | undefined;
}

/**
 * Sets a condition on a list (returns a new list), like apimachinery's meta.SetStatusCondition: keeps
 * lastTransitionTime unless the status flips, and stamps the observed generation (always, so a reader can
 * tell a condition about an older spec). The one place conditions are written, for every resource.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime" | "observedGeneration">,
  at: ConditionAt,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : at.now.toISOString();
  const cond: Condition = {
    ...next,
    lastTransitionTime,
    ...(at.generation !== undefined ? { observedGeneration: at.generation } : {}),
  };
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
