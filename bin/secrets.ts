import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../core/config.js";
import { SCOPES } from "../core/scopes.js";

/**
 * The token signing key: DOCVERIFY_TOKEN_SIGNING_KEY, or the file named by DOCVERIFY_TOKEN_SIGNING_KEY_FILE,
 * or (standalone) a random key generated once into the data directory.
 */
export async function loadSigningKey(config: Config, generateInto?: string): Promise<Uint8Array> {
  let key: string | undefined = config.tokenSigningKey;
  if (!key && config.tokenSigningKeyFile) key = (await readFile(config.tokenSigningKeyFile, "utf8")).trim();
  if (!key && generateInto) {
    const file = path.join(generateInto, "token-signing-key");
    if (!existsSync(file)) {
      await mkdir(generateInto, { recursive: true });
      await writeFile(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" }).catch((e) => {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      });
    }
    key = (await readFile(file, "utf8")).trim();
  }
  if (!key) {
    throw new Error(
      "No token signing key: set DOCVERIFY_TOKEN_SIGNING_KEY or DOCVERIFY_TOKEN_SIGNING_KEY_FILE.",
    );
  }
  const bytes = new TextEncoder().encode(key);
  if (bytes.length < 32) throw new Error("The token signing key must be at least 32 bytes long.");
  return bytes;
}

export interface DevClient {
  client_id: string;
  client_secret: string;
  scopes: string[];
  sample_allowance: number;
  buckets: string[];
}

/** The development client standalone creates when no DOCVERIFY_CLIENTS_FILE is given. */
export async function loadOrCreateDevClient(
  dataDir: string,
): Promise<{ client: DevClient; created: boolean; file: string }> {
  const file = path.join(dataDir, "dev-client.json");
  if (existsSync(file)) {
    return { client: JSON.parse(await readFile(file, "utf8")) as DevClient, created: false, file };
  }
  const client: DevClient = {
    client_id: `dev-${randomBytes(4).toString("hex")}`,
    client_secret: randomBytes(24).toString("base64url"),
    scopes: [SCOPES.all],
    sample_allowance: 100,
    buckets: ["inbox"],
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(client, null, 2)}\n`, { mode: 0o600 });
  return { client, created: true, file };
}

/**
 * The tenant memory's key (issue 23): DOCVERIFY_MEMORY_KEY, the file DOCVERIFY_MEMORY_KEY_FILE, or
 * (standalone, `generateInto` set) a random key generated once into the data directory. Undefined when the
 * memory is off or no key is configured (the cluster: the chart's secret sets one).
 */
export async function loadMemoryKey(config: Config, generateInto?: string): Promise<Uint8Array | undefined> {
  if (!config.memory.enabled) return undefined;
  let key = config.memory.key;
  if (!key && config.memory.keyFile) key = (await readFile(config.memory.keyFile, "utf8")).trim();
  if (!key && generateInto) {
    const file = path.join(generateInto, "memory-key");
    if (!existsSync(file)) {
      await mkdir(generateInto, { recursive: true });
      await writeFile(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" }).catch((e) => {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      });
    }
    key = (await readFile(file, "utf8")).trim();
  }
  if (!key) return undefined;
  const bytes = new TextEncoder().encode(key);
  if (bytes.length < 32)
    throw new Error("The memory key (DOCVERIFY_MEMORY_KEY) must be at least 32 bytes long.");
  return bytes;
}
