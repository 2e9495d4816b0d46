import {
  createHash,
  randomBytes,
  type ScryptOptions,
  scrypt,
  scryptSync,
  timingSafeEqual,
} from "node:crypto";
import { readFile } from "node:fs/promises";
import { ClientRegistration, ClientsFile } from "../../core/clients.js";

/** scrypt cost: N = 2^ln, block size r, parallelism p. */
export interface ScryptCost {
  ln: number;
  r: number;
  p: number;
}
/** 2^15 · 8 · 128 B = 32 MiB and about 50-100 ms per hash: OWASP's minimum class for interactive logins. */
export const DEFAULT_SCRYPT_COST: ScryptCost = { ln: 15, r: 8, p: 1 };
const KEY_LEN = 32;
const LIMITS = { ln: [1, 20], r: [1, 32], p: [1, 16] } as const;

export class ClientsFileError extends Error {
  override name = "ClientsFileError";
}

interface ParsedHash {
  cost: ScryptCost;
  salt: Buffer;
  hash: Buffer;
}

function scryptOptions(cost: ScryptCost): ScryptOptions {
  const N = 2 ** cost.ln;
  return { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r + 1024 * 1024 };
}

/** scrypt on the libuv thread pool (request time: never blocks the event loop). */
function scryptAsync(secret: string, salt: Buffer, keyLen: number, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, keyLen, scryptOptions(cost), (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const b64 = (b: Buffer) => b.toString("base64").replace(/=+$/, "");
const phc = (cost: ScryptCost, salt: Buffer, hash: Buffer) =>
  `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${b64(salt)}$${b64(hash)}`;

/** Hashes a client secret into a PHC string: `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, no padding). */
export async function hashSecret(secret: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(16);
  return phc(cost, salt, await scryptAsync(secret, salt, KEY_LEN, cost));
}

/** hashSecret, synchronously (load time only). */
export function hashSecretSync(secret: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): string {
  const salt = randomBytes(16);
  return phc(cost, salt, scryptSync(secret, salt, KEY_LEN, scryptOptions(cost)));
}

/** Parses a scrypt PHC string; undefined when it is not one or its parameters are out of range. */
export function parseSecretHash(phc: string): ParsedHash | undefined {
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+=*)\$([A-Za-z0-9+/]+=*)$/.exec(phc);
  if (!m) return undefined;
  const cost = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  for (const k of ["ln", "r", "p"] as const) {
    if (cost[k] < LIMITS[k][0] || cost[k] > LIMITS[k][1]) return undefined;
  }
  const salt = Buffer.from(m[4]!, "base64");
  const hash = Buffer.from(m[5]!, "base64");
  if (salt.length < 8 || hash.length < 16) return undefined;
  return { cost, salt, hash };
}

async function matches(secret: string, stored: ParsedHash): Promise<boolean> {
  const candidate = await scryptAsync(secret, stored.salt, stored.hash.length, stored.cost);
  return timingSafeEqual(candidate, stored.hash);
}

export interface ClientRegistry {
  /**
   * The registration when `secret` is the client's secret, else undefined. Constant time in the secret,
   * and an unknown client costs the same scrypt work, so timing reveals neither secrets nor which ids exist.
   */
  verify(clientId: string, secret: string): Promise<ClientRegistration | undefined>;
  get(clientId: string): ClientRegistration | undefined;
  ids(): string[];
  /**
   * A digest of the client's credential as the clients file has it now (its id and its secret, or its
   * secret's hash): it changes when the secret does. Kept in memory only; tokens carry an HMAC of it
   * (api/auth/credential-binding.ts), never the digest itself.
   */
  fingerprint(clientId: string): string | undefined;
}

/** The fingerprint of a client's credential: plain secrets are hashed here and then forgotten. */
function credentialFingerprint(c: ClientsFile["clients"][number]): string {
  const material =
    c.client_secret_hash !== undefined ? `hash\n${c.client_secret_hash}` : `plain\n${c.client_secret}`;
  return createHash("sha256")
    .update(`docverify-client-credential\n${c.client_id}\n${material}`)
    .digest("hex");
}

function parseClientsFile(input: unknown): ClientsFile {
  const parsed = ClientsFile.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `${i.path.length ? i.path.join(".") : "(file)"}: ${i.message}`,
    );
    throw new ClientsFileError(`The clients file is not valid: ${lines.join("; ")}`);
  }
  return parsed.data;
}

/** The registry over clients whose stored hashes are known (`hashes[i]` is the PHC string of `clients[i]`). */
function registryOf(clients: ClientsFile["clients"], hashes: string[], decoyPhc: string): ClientRegistry {
  const byId = new Map<string, { reg: ClientRegistration; hash: ParsedHash; fingerprint: string }>();
  clients.forEach((c, i) => {
    const stored = hashes[i]!;
    const hash = parseSecretHash(stored);
    if (!hash) {
      throw new ClientsFileError(
        `Client ${c.client_id}: client_secret_hash is not a scrypt PHC string like $scrypt$ln=15,r=8,p=1$<salt>$<hash>; make one with \`docverify hash-secret\`.`,
      );
    }
    const { client_secret: _plain, ...reg } = c;
    byId.set(c.client_id, {
      reg: ClientRegistration.parse({ ...reg, client_secret_hash: stored }),
      hash,
      fingerprint: credentialFingerprint(c),
    });
  });
  const decoy = parseSecretHash(decoyPhc)!;
  return {
    async verify(clientId, secret) {
      const entry = byId.get(clientId);
      const ok = await matches(secret, entry?.hash ?? decoy);
      return entry && ok ? structuredClone(entry.reg) : undefined;
    },
    get: (clientId) => {
      const entry = byId.get(clientId);
      return entry ? structuredClone(entry.reg) : undefined;
    },
    ids: () => [...byId.keys()],
    fingerprint: (clientId) => byId.get(clientId)?.fingerprint,
  };
}

/**
 * Builds the registry from the clients file's JSON (core/clients.ts): plain `client_secret`s are hashed
 * in memory at load and then forgotten; `client_secret_hash` PHC strings are used as they are.
 * `cost` is the scrypt cost for plain secrets (and the decoy hash used for unknown clients).
 * Synchronous (start-up); buildClientRegistry hashes off the event loop (reloads while serving).
 */
export function createClientRegistry(input: unknown, opts: { cost?: ScryptCost } = {}): ClientRegistry {
  const file = parseClientsFile(input);
  const cost = opts.cost ?? DEFAULT_SCRYPT_COST;
  const hashes = file.clients.map((c) => c.client_secret_hash ?? hashSecretSync(c.client_secret!, cost));
  return registryOf(file.clients, hashes, hashSecretSync(randomBytes(16).toString("hex"), cost));
}

/** createClientRegistry with the hashing on the thread pool, one secret at a time (never blocks serving). */
export async function buildClientRegistry(
  input: unknown,
  opts: { cost?: ScryptCost } = {},
): Promise<ClientRegistry> {
  const file = parseClientsFile(input);
  const cost = opts.cost ?? DEFAULT_SCRYPT_COST;
  const hashes: string[] = [];
  for (const c of file.clients)
    hashes.push(c.client_secret_hash ?? (await hashSecret(c.client_secret!, cost)));
  return registryOf(file.clients, hashes, await hashSecret(randomBytes(16).toString("hex"), cost));
}

/** Parses the clients file's text, naming the file when it cannot. */
export function parseClientsJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ClientsFileError(`Could not read the clients file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** The text of DOCVERIFY_CLIENTS_FILE; ClientsFileError when it cannot be read. */
export async function readClientsFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new ClientsFileError(`Could not read the clients file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Reads DOCVERIFY_CLIENTS_FILE and builds the registry. */
export async function loadClientRegistry(
  file: string,
  opts: { cost?: ScryptCost } = {},
): Promise<ClientRegistry> {
  return buildClientRegistry(parseClientsJson(file, await readClientsFile(file)), opts);
}
