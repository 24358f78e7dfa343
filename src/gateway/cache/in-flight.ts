/**
 * In-flight deduplication: identical reads that arrive while one is running share its answer
 * (one backend call for N clients asking the same thing at once). Writes never come here.
 */

export class InFlight<T> {
  readonly #running = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.#running.get(key);
    if (running) return running;
    const started = work().finally(() => this.#running.delete(key));
    this.#running.set(key, started);
    return started;
  }

  get size(): number {
    return this.#running.size;
  }
}
