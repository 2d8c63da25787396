/**
 * Start and stop hooks of the process's parts (scheduler, provider connections, database). Stop hooks run
 * in reverse order of registration, each awaited, errors collected so one failure does not skip the rest.
 */
export class Lifecycle {
  private readonly starts: Array<{ name: string; fn: () => Promise<void> | void }> = [];
  private readonly stops: Array<{ name: string; fn: () => Promise<void> | void }> = [];
  private started = false;
  private stopped = false;

  onStart(name: string, fn: () => Promise<void> | void): void {
    this.starts.push({ name, fn });
  }
  onStop(name: string, fn: () => Promise<void> | void): void {
    this.stops.push({ name, fn });
  }
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const s of this.starts) await s.fn();
  }
  /** Runs every stop hook once; returns the names of hooks that failed. */
  async stop(): Promise<string[]> {
    if (this.stopped) return [];
    this.stopped = true;
    const failed: string[] = [];
    for (const s of [...this.stops].reverse()) {
      try {
        await s.fn();
      } catch {
        failed.push(s.name);
      }
    }
    return failed;
  }
}
