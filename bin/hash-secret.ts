import { hashSecret } from "../api/auth/clients.js";

/** `docverify hash-secret`: reads a secret on stdin, prints its scrypt PHC hash for the clients file. */
export async function runHashSecret(): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const secret = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (!secret) {
    process.stderr.write("docverify hash-secret: give the secret on standard input\n");
    return 2;
  }
  process.stdout.write(`${await hashSecret(secret)}\n`);
  return 0;
}
