import { isMap, parseDocument } from "yaml";

// biome-ignore lint/suspicious/noExplicitAny: JSON schema nodes
type Schema = any;

/**
 * Keys of values.yaml without a comment (a comment line before the key, a comment after the key or its value on
 * the same line, or — for the first key of a block — the comment before the block). Descends only into keys
 * the schema defines with `properties`: entries of free-form maps (resources, label selectors) are data.
 */
export function uncommentedKeys(valuesYaml: string, schema: Schema): string[] {
  const doc = parseDocument(valuesYaml);
  const missing: string[] = [];
  const walk = (node: unknown, nodeSchema: Schema, at: string) => {
    if (!isMap(node) || !nodeSchema?.properties) return;
    node.items.forEach((pair, index) => {
      const key = String((pair.key as { value?: unknown }).value);
      const path = at ? `${at}.${key}` : key;
      const keyNode = pair.key as { commentBefore?: string | null };
      const valueNode = pair.value as { comment?: string | null; commentBefore?: string | null } | null;
      const commented =
        Boolean(keyNode.commentBefore) ||
        Boolean(valueNode?.comment) ||
        // `key: # comment` before a nested block
        Boolean(valueNode?.commentBefore) ||
        (index === 0 && Boolean(node.commentBefore)) ||
        (at === "" && index === 0 && Boolean(doc.commentBefore));
      if (!commented) missing.push(path);
      walk(pair.value, nodeSchema.properties[key], path);
    });
  };
  walk(doc.contents, schema, "");
  return missing;
}

/** Keys of values.yaml the schema does not define (the schema would reject the chart's own defaults). */
export function keysMissingFromSchema(value: unknown, schema: Schema, at = ""): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value) || !schema?.properties) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const path = at ? `${at}.${k}` : k;
    if (!(k in schema.properties)) out.push(path);
    else out.push(...keysMissingFromSchema(v, schema.properties[k], path));
  }
  return out;
}
