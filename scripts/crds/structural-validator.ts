import type { StructuralSchema } from "./structural-schema.js";

/**
 * Validates a value against a structural schema the way the apiserver's OpenAPI validation does for the
 * keywords our CRDs use (type, nullable, enum, pattern, bounds, lengths, required, items, properties,
 * additionalProperties). CEL rules (`x-kubernetes-validations`) are not evaluated: the cluster e2e proves
 * them on a real apiserver. Unknown fields are not errors (the apiserver prunes them); `unknownFields`
 * lists them so a test can tell that a field would be dropped.
 */
export interface StructuralReport {
  errors: string[];
  unknownFields: string[];
}

export function validateStructural(schema: StructuralSchema, value: unknown): StructuralReport {
  const report: StructuralReport = { errors: [], unknownFields: [] };
  walk(schema, value, "", report);
  return report;
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function walk(s: StructuralSchema, v: unknown, path: string, r: StructuralReport): void {
  const at = path || "(root)";
  if (v === null) {
    if (!s.nullable && !s["x-kubernetes-preserve-unknown-fields"]) r.errors.push(`${at}: must not be null`);
    // As the apiserver does: enum is checked for null too (a nullable enum must list null).
    else if (s.enum && !s.enum.includes(null)) r.errors.push(`${at}: null is not one of the enum`);
    return;
  }
  const t = typeOf(v);
  if (s.type) {
    const ok = s.type === t || (s.type === "number" && t === "integer");
    if (!ok) {
      r.errors.push(`${at}: expected ${s.type}, got ${t}`);
      return;
    }
  }
  if (s.enum && !s.enum.some((e) => e === v))
    r.errors.push(`${at}: ${JSON.stringify(v)} is not one of the enum`);
  if (typeof v === "string") {
    if (s.pattern && !new RegExp(s.pattern, "u").test(v)) r.errors.push(`${at}: does not match ${s.pattern}`);
    if (s.minLength !== undefined && v.length < s.minLength)
      r.errors.push(`${at}: shorter than ${s.minLength}`);
    if (s.maxLength !== undefined && v.length > s.maxLength)
      r.errors.push(`${at}: longer than ${s.maxLength}`);
  }
  if (typeof v === "number") {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
      r.errors.push(`${at}: below the minimum ${s.minimum}`);
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
      r.errors.push(`${at}: above the maximum ${s.maximum}`);
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems)
      r.errors.push(`${at}: fewer than ${s.minItems} items`);
    if (s.maxItems !== undefined && v.length > s.maxItems)
      r.errors.push(`${at}: more than ${s.maxItems} items`);
    const items = s.items;
    if (items) for (const [i, item] of v.entries()) walk(items, item, `${path}[${i}]`, r);
  }
  if (t === "object") {
    const obj = v as Record<string, unknown>;
    for (const name of s.required ?? []) if (!(name in obj)) r.errors.push(`${at}: ${name} is required`);
    for (const [k, child] of Object.entries(obj)) {
      if (path === "" && k === "metadata") continue; // ObjectMeta is the apiserver's, not the schema's
      const sub = s.properties?.[k] ?? s.additionalProperties;
      if (sub) walk(sub, child, path ? `${path}.${k}` : k, r);
      else if (!s["x-kubernetes-preserve-unknown-fields"]) r.unknownFields.push(path ? `${path}.${k}` : k);
    }
  }
}
