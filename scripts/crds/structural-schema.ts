import { type ZodType, z } from "zod";

/**
 * A Kubernetes structural schema (apiextensions.k8s.io/v1 `openAPIV3Schema` subset): every node names its
 * type; no anyOf/oneOf/allOf; unknown content only where `x-kubernetes-preserve-unknown-fields` says so.
 */
export interface StructuralSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  properties?: Record<string, StructuralSchema>;
  required?: string[];
  additionalProperties?: StructuralSchema;
  items?: StructuralSchema;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  default?: unknown;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-validations"?: { rule: string; message: string }[];
}

export class SchemaConversionError extends Error {
  override name = "SchemaConversionError";
}

type Json = Record<string, unknown>;

const SAFE = Number.MAX_SAFE_INTEGER;
/** Keys of zod's OpenAPI 3.0 output that carry no validation the apiserver needs. */
const DROPPED = new Set(["$schema", "propertyNames", "id", "title"]);

/**
 * Converts a zod schema to a structural schema. Zod's OpenAPI 3.0 output is almost structural already;
 * this removes what Kubernetes refuses (safe-integer bounds, `propertyNames`, `additionalProperties: {}`,
 * `const`) and fails loudly on anything it cannot express, so a schema change never silently loosens the CRD.
 * Refinements (`.refine`) are not representable: add them as CEL rules with `withValidations`.
 */
export function zodToStructural(schema: ZodType): StructuralSchema {
  const json = z.toJSONSchema(schema, { io: "input", target: "openapi-3.0", unrepresentable: "throw" });
  return convert(json as Json, "");
}

function convert(node: Json, path: string): StructuralSchema {
  const at = path || "(root)";
  if (Object.keys(node).length === 0) return { "x-kubernetes-preserve-unknown-fields": true };
  const out: StructuralSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    switch (key) {
      case "type":
        if (typeof value !== "string")
          throw new SchemaConversionError(`${at}: a union of types cannot be expressed in a CRD`);
        out.type = value as StructuralSchema["type"];
        break;
      case "properties": {
        const props: Record<string, StructuralSchema> = {};
        for (const [name, sub] of Object.entries(value as Record<string, Json>))
          props[name] = convert(sub, `${path}.${name}`);
        out.properties = props;
        break;
      }
      case "additionalProperties":
        if (value === false) break; // strict objects: the apiserver prunes unknown fields anyway
        if (typeof value === "object" && value !== null && Object.keys(value).length === 0) {
          out["x-kubernetes-preserve-unknown-fields"] = true;
        } else {
          out.additionalProperties = convert(value as Json, `${path}.*`);
        }
        break;
      case "items":
        out.items = convert(value as Json, `${path}[]`);
        break;
      case "const":
        out.enum = [value];
        break;
      case "minimum":
        if (value !== -SAFE) out.minimum = value as number;
        break;
      case "maximum":
        if (value !== SAFE) out.maximum = value as number;
        break;
      case "required":
      case "enum":
      case "pattern":
      case "format":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
      case "minLength":
      case "maxLength":
      case "minItems":
      case "maxItems":
      case "nullable":
      case "default":
      case "description":
        (out as Record<string, unknown>)[key] = value;
        break;
      default:
        throw new SchemaConversionError(
          `${at}: "${key}" has no structural equivalent; simplify the zod schema or extend zodToStructural`,
        );
    }
  }
  // The apiserver checks enum even for null and refuses null then, also when null is listed: a nullable
  // string enum becomes a pattern (checked only on strings), so null stays allowed.
  if (out.nullable && out.enum && out.type === "string" && out.pattern === undefined) {
    out.pattern = `^(${out.enum.map((v) => String(v).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|")})$`;
    delete out.enum;
  }
  if (out.type === undefined && !out["x-kubernetes-preserve-unknown-fields"])
    throw new SchemaConversionError(`${at}: every node of a structural schema needs a type`);
  if (out.type === "object" && !out.properties && !out.additionalProperties)
    out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

/** Returns a copy of `schema` with CEL rules added at the node `path` (property names, e.g. ["spec","source"]). */
export function withValidations(
  schema: StructuralSchema,
  path: readonly string[],
  rules: { rule: string; message: string }[],
): StructuralSchema {
  const copy = structuredClone(schema);
  let node: StructuralSchema | undefined = copy;
  for (const p of path) node = node?.properties?.[p];
  if (!node) throw new SchemaConversionError(`no property at ${path.join(".")} to attach a rule to`);
  node["x-kubernetes-validations"] = [...(node["x-kubernetes-validations"] ?? []), ...rules];
  return copy;
}
