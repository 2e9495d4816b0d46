import { createHash } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { unknownScopes } from "../../core/scopes.js";
import type { Logger } from "../../core/step-context.js";
import {
  buildClientRegistry,
  type ClientRegistry,
  parseClientsJson,
  readClientsFile,
  type ScryptCost,
} from "./clients.js";

export interface ReloadingClientRegistry extends ClientRegistry {
  /** Reads the file now and swaps the clients in when it changed and is valid; true when swapped. */
  reload(): Promise<boolean>;
  /** Stops watching. */
  close(): void;
}

export interface ClientsFileWatchOptions {
  log: Logger;
  cost?: ScryptCost;
  /** How often the file is read as a fallback to fs.watch, in ms (default 5000). */
  pollMs?: number;
  /** Watch the folder (default true); false leaves only the periodic read (tests of that fallback). */
  watch?: boolean;
  /** Called after each reload that read a changed file: ok = the new clients are in use. */
  onReload?: (ok: boolean) => void;
  /**
   * Called when a changed file is in use, with the clients it added and removed (before onReload): the
   * credential revocation (api/auth/revocations.ts) records the removed and reads the added back.
   */
  onChange?: (change: { added: string[]; removed: string[] }) => Promise<void>;
}

/** Logs each client's scopes that name nothing the service knows (they are never granted). */
export function warnUnknownScopes(registry: ClientRegistry, log: Logger): void {
  for (const id of registry.ids()) {
    const unknown = unknownScopes(registry.get(id)?.scopes ?? []);
    if (unknown.length > 0) {
      log.warn(
        { clientId: id, scopes: unknown },
        `client ${id} is registered for unknown scopes, which are never granted: ${unknown.join(", ")}`,
      );
    }
  }
}

/**
 * The clients registry of DOCVERIFY_CLIENTS_FILE, reloaded when the file changes: fs.watch on its folder
 * (which also sees a Kubernetes Secret volume swap its `..data` link) and, because watches can miss events
 * (network filesystems, inotify limits), a read every `pollMs`. A read whose content is unchanged does
 * nothing; a changed, valid file replaces every client at once; a changed file that is missing or invalid
 * keeps the clients in use and logs an error (once per content), so a bad edit never locks everyone out.
 * The first load must succeed (it throws ClientsFileError otherwise, as at start-up before).
 */
export async function watchClientsFile(
  file: string,
  opts: ClientsFileWatchOptions,
): Promise<ReloadingClientRegistry> {
  const { log } = opts;
  const digest = (text: string) => createHash("sha256").update(text).digest("hex");
  const build = async (text: string) => buildClientRegistry(parseClientsJson(file, text), opts);

  const text = await readClientsFile(file);
  let current = await build(text);
  warnUnknownScopes(current, log);
  /** The content last looked at (good or bad), so an unchanged file is not parsed or logged again. */
  let seen = digest(text);

  /**
   * Clients the changed file removes, while their removal is being recorded (onChange): already gone for
   * tokens and lookups, since the revocation refuses their earlier tokens from its first moment, and a
   * client whose tokens are refused must not be handed a new one meanwhile.
   */
  let withdrawn = new Set<string>();

  let running: Promise<boolean> | undefined;
  let again = false;
  async function check(): Promise<boolean> {
    let content: string;
    try {
      content = await readFile(file, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
      if (seen !== code) {
        seen = code;
        opts.onReload?.(false);
        log.error(
          { err, file },
          `the clients file ${file} cannot be read (${code}); the ${current.ids().length} clients loaded before stay in use`,
        );
      }
      return false;
    }
    const d = digest(content);
    if (d === seen) return false;
    seen = d;
    try {
      const next = await build(content);
      const before = new Set(current.ids());
      const after = next.ids();
      const added = after.filter((id) => !before.has(id));
      const removed = [...before].filter((id) => !after.includes(id));
      // Revocations are recorded before the new clients are in use: a client added back never serves
      // (even for a moment) the tokens issued before its removal.
      if (opts.onChange) {
        withdrawn = new Set(removed);
        try {
          await opts.onChange({ added, removed });
        } catch (err) {
          // The clients loaded before stay in use, and the file is read again on the next check.
          withdrawn = new Set();
          seen = "";
          opts.onReload?.(false);
          log.error(
            { err, file, added, removed },
            `recording the removed and added clients failed; the ${current.ids().length} clients loaded before stay in use until it succeeds`,
          );
          return false;
        }
      }
      current = next;
      withdrawn = new Set();
      log.info({ file, clients: after.length, added, removed }, "reloaded the clients file");
      warnUnknownScopes(next, log);
      opts.onReload?.(true);
      return true;
    } catch (err) {
      opts.onReload?.(false);
      log.error(
        { file, reason: err instanceof Error ? err.message : String(err) },
        `the changed clients file is not valid; the ${current.ids().length} clients loaded before stay in use`,
      );
      return false;
    }
  }
  /** One check at a time; a request during a check runs one more afterwards. */
  function reload(): Promise<boolean> {
    if (running) {
      again = true;
      return running;
    }
    running = check().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        void reload();
      }
    });
    return running;
  }

  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  const onChange = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => void reload(), 50);
  };
  if (opts.watch !== false) {
    try {
      watcher = watch(path.dirname(path.resolve(file)), { persistent: false }, onChange);
      watcher.on("error", (err) => {
        log.warn({ err, file }, "watching the clients file failed; it is still read every few seconds");
        watcher?.close();
      });
    } catch (err) {
      log.warn({ err, file }, "cannot watch the clients file; it is read every few seconds instead");
    }
  }
  const poll = setInterval(() => void reload(), opts.pollMs ?? 5_000);
  poll.unref();

  return {
    async verify(id, secret) {
      // Verified against the clients of the moment the request came; not granted when the client was
      // withdrawn or changed its secret meanwhile (scrypt takes a while). A withdrawn client costs the same
      // scrypt work as any other.
      const at = current;
      const found = await at.verify(id, secret);
      if (!found || withdrawn.has(id)) return undefined;
      return at === current || current.fingerprint(id) === at.fingerprint(id) ? found : undefined;
    },
    get: (id) => (withdrawn.has(id) ? undefined : current.get(id)),
    ids: () => current.ids().filter((id) => !withdrawn.has(id)),
    fingerprint: (id) => (withdrawn.has(id) ? undefined : current.fingerprint(id)),
    reload,
    close() {
      clearInterval(poll);
      clearTimeout(debounce);
      watcher?.close();
    },
  };
}
