import type { Logger } from "../core/step-context.js";

/**
 * A pass the operator runs now and then (the upload sweeper, the archive pruner): `run` runs it once, and
 * concurrent calls share the pass in progress; `start` runs it now and every `intervalMs` until `stop`, a
 * failed pass being logged (`failure`) and tried again the next period.
 */
export function periodicPass<R>(pass: () => Promise<R>, log: Logger, failure: string) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<R> | undefined;
  const run = (): Promise<R> => {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    run,
    start(intervalMs: number): void {
      const tick = () => void run().catch((err) => log.error({ err }, failure));
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
