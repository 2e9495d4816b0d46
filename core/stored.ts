import type { z } from "zod";
import { ObjectNotFoundError, type ObjectStore } from "./ports.js";

/**
 * The one reader and writer of the JSON objects the service keeps in its object store: step results,
 * the evidence manifest, archive records and archived verdicts, upload reservations. Each kind of object
 * is declared once with `defineStored` (what it is in words, its key, its zod schema) beside its schema;
 * every reader reads it with `readStored` and every writer writes it with `writeStored`, so no module
 * parses or validates one by hand.
 *
 * A read is a value, never an exception for what the object holds: `ok` with the parsed value, `missing`
 * when there is no object at the key, `invalid` when the object is not JSON or not of the kind's shape
 * (with the problem in words). Only an unavailable object store throws (a transient error: the caller's
 * pass is retried). A write validates the value first and throws on a value of the wrong shape (a bug
 * of the writer, never stored).
 *
 * The kinds: `STEP_RESULTS` (core/step-results.ts), `EVIDENCE_MANIFEST` (core/evidence.ts),
 * `ARCHIVE_RECORD` and `ARCHIVED_VERDICT` (core/archive.ts), `UPLOAD_RESERVATION` (core/upload.ts);
 * docs/layout.md lists them.
 */

/** One kind of stored object: what it is (for messages), where it is kept, and its schema. */
export interface StoredKind<S extends z.ZodType, A extends readonly unknown[]> {
  /** What the object is, in words that fit "… is missing": e.g. "the check step's result". */
  readonly what: string;
  /** Its object key in the service bucket. */
  readonly key: (...args: A) => string;
  readonly schema: S;
}

export function defineStored<S extends z.ZodType, A extends readonly unknown[]>(
  kind: StoredKind<S, A>,
): StoredKind<S, A> {
  return kind;
}

/** Why a stored object is invalid: it is not JSON, or its JSON is not of the kind's shape. */
export type StoredProblem = "not_json" | "wrong_shape";

export type StoredRead<T> =
  | { kind: "ok"; key: string; value: T }
  | { kind: "missing"; key: string }
  | {
      kind: "invalid";
      key: string;
      problem: StoredProblem;
      /** Where in the object (a dotted path, "(root)"), for a wrong shape. */
      at: string;
      /** The schema's complaint there (a wrong shape), or "not valid JSON". */
      issue: string;
      /** The problem in words, e.g. "is not valid JSON" or "does not have the expected shape (checks.0.severity: …)". */
      reason: string;
    };

export type StoredValue<K> = K extends StoredKind<infer S, readonly unknown[]> ? z.output<S> : never;

/** Reads and validates the object of `kind` at the key `args` name. */
export function readStored<S extends z.ZodType, A extends readonly unknown[]>(
  objects: ObjectStore,
  bucket: string,
  kind: StoredKind<S, A>,
  ...args: A
): Promise<StoredRead<z.output<S>>> {
  return readStoredAt(objects, bucket, kind, kind.key(...args));
}

/** Reads and validates the object of `kind` at `key` (for a key found by listing). */
export async function readStoredAt<S extends z.ZodType>(
  objects: ObjectStore,
  bucket: string,
  kind: { readonly schema: S },
  key: string,
): Promise<StoredRead<z.output<S>>> {
  let raw: Buffer;
  try {
    raw = await objects.get(bucket, key);
  } catch (err) {
    if (err instanceof ObjectNotFoundError) return { kind: "missing", key };
    throw err;
  }
  return parseStored(kind, key, raw);
}

/** Validates bytes read elsewhere as an object of `kind` (the same answers as readStored). */
export function parseStored<S extends z.ZodType>(
  kind: { readonly schema: S },
  key: string,
  raw: Buffer | string,
): StoredRead<z.output<S>> {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === "string" ? raw : raw.toString("utf8"));
  } catch {
    return {
      kind: "invalid",
      key,
      problem: "not_json",
      at: "(root)",
      issue: "not valid JSON",
      reason: "is not valid JSON",
    };
  }
  const parsed = kind.schema.safeParse(json);
  if (parsed.success) return { kind: "ok", key, value: parsed.data };
  const issue = parsed.error.issues[0];
  const at = issue?.path.join(".") || "(root)";
  const message = issue?.message ?? "invalid";
  return {
    kind: "invalid",
    key,
    problem: "wrong_shape",
    at,
    issue: message,
    reason: `does not have the expected shape (${at}: ${message})`,
  };
}

/** A value of the wrong shape handed to writeStored: a bug of the writer, so it is thrown. */
export class StoredShapeError extends Error {
  override name = "StoredShapeError";
}

/**
 * Validates `value` against the kind's schema and writes what the schema outputs (defaults filled in) as
 * JSON at the key `args` name. Returns the key.
 */
export async function writeStored<S extends z.ZodType, A extends readonly unknown[]>(
  objects: ObjectStore,
  bucket: string,
  kind: StoredKind<S, A>,
  value: z.input<S>,
  ...args: A
): Promise<string> {
  const key = kind.key(...args);
  const parsed = kind.schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StoredShapeError(
      `Refused to store ${kind.what} at ${key}: it does not have the expected shape (${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}).`,
      { cause: parsed.error },
    );
  }
  await objects.put(bucket, key, JSON.stringify(parsed.data), { contentType: "application/json" });
  return key;
}

/** One sentence about a read that is not `ok`: "<what> (<key>) is missing." / "… is not valid JSON." */
export function describeStoredRead(what: string, read: Exclude<StoredRead<unknown>, { kind: "ok" }>): string {
  const subject = `${capitalize(what)} (${read.key})`;
  return read.kind === "missing" ? `${subject} is missing.` : `${subject} ${read.reason}.`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
