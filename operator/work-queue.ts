/**
 * A keyed work queue in the manner of client-go's workqueue: a key is processed by at most one worker at a
 * time, duplicates collapse while waiting, a key re-added while processing is run again afterwards, and
 * `addAfter` schedules a delayed add (the earliest wins).
 */
export interface WorkQueueOptions {
  concurrency: number;
  handler: (key: string) => Promise<void>;
  onError?: (key: string, err: unknown) => void;
}

export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly order: string[] = [];
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private running = 0;
  private closed = false;
  private idleResolvers: (() => void)[] = [];

  constructor(private readonly opts: WorkQueueOptions) {}

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.order.push(key);
    this.pump();
  }

  /** Adds `key` after `ms`; an earlier pending delayed add for the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        this.add(key);
      },
      Math.min(ms, 2 ** 31 - 1),
    );
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  get length(): number {
    return this.waiting.size;
  }

  get busy(): number {
    return this.running;
  }

  /** Resolves when nothing waits or runs (delayed adds not counted). */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleResolvers.push(r));
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.waiting.clear();
    this.order.length = 0;
  }

  private pump(): void {
    while (!this.closed && this.running < this.opts.concurrency && this.order.length > 0) {
      const key = this.order.shift()!;
      if (!this.waiting.has(key)) continue;
      this.waiting.delete(key);
      this.active.add(key);
      this.running++;
      void this.process(key);
    }
    if (this.running === 0 && this.waiting.size === 0) {
      const rs = this.idleResolvers;
      this.idleResolvers = [];
      for (const r of rs) r();
    }
  }

  private async process(key: string): Promise<void> {
    try {
      await this.opts.handler(key);
    } catch (err) {
      this.opts.onError?.(key, err);
    } finally {
      this.active.delete(key);
      this.running--;
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
  }
}
