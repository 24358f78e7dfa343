/**
 * Who may try a script upload in workerd, and when: the trial starts of uploads (each a workerd
 * process for a moment, up to the script's CPU limit when its top level never ends) shared fairly
 * between accounts. At most `running` trials run at once, at most `runningPerAccount` of one
 * account; an account may have `waitingPerAccount` more waiting, and the server `waiting` in all.
 * A freed place goes to the longest-waiting upload of an account below its running share, so an
 * account flooding uploads that never start holds one place at most, and another account's upload
 * takes the next free one.
 */
import { DEFAULTS } from '../config/defaults.ts';
import type { UploadTrialLimits } from '../config/schema.ts';

export type TrialQueueLimits = UploadTrialLimits;

/** Why an upload was not let in: its account already has its share in flight, or the server has as many waiting as it holds. */
export type TrialRefusal = 'account' | 'server';

interface Waiting {
  account: string;
  start: () => void;
}

export class TrialQueue {
  readonly #limits: TrialQueueLimits;
  #running = 0;
  readonly #runningBy = new Map<string, number>();
  readonly #waiting: Waiting[] = [];

  constructor(limits: TrialQueueLimits = DEFAULTS.workers.uploadTrials) {
    this.#limits = limits;
  }

  /**
   * Runs `trial` once the account has a place, and frees it when the trial ends; or, past the
   * account's or the server's share of waiting uploads, answers the refusal at once.
   */
  async run<T>(account: string, trial: () => Promise<T>): Promise<T | { refused: TrialRefusal }> {
    if (this.#mayStart(account)) this.#take(account);
    else {
      if (this.#waiting.filter((waiting) => waiting.account === account).length >= this.#limits.waitingPerAccount) return { refused: 'account' };
      if (this.#waiting.length >= this.#limits.waiting) return { refused: 'server' };
      // #startNext takes the place for it before it resumes.
      await new Promise<void>((start) => this.#waiting.push({ account, start }));
    }
    try {
      return await trial();
    } finally {
      this.#running--;
      const left = this.#runningBy.get(account)! - 1;
      if (left === 0) this.#runningBy.delete(account);
      else this.#runningBy.set(account, left);
      this.#startNext();
    }
  }

  /** Trials running and uploads waiting (for tests and metrics). */
  get counts(): { running: number; waiting: number } {
    return { running: this.#running, waiting: this.#waiting.length };
  }

  #mayStart(account: string): boolean {
    return this.#running < this.#limits.running && (this.#runningBy.get(account) ?? 0) < this.#limits.runningPerAccount;
  }

  #take(account: string): void {
    this.#running++;
    this.#runningBy.set(account, (this.#runningBy.get(account) ?? 0) + 1);
  }

  /** Hands the free places to the longest-waiting uploads whose accounts are below their share. */
  #startNext(): void {
    for (let i = 0; i < this.#waiting.length && this.#running < this.#limits.running;) {
      const next = this.#waiting[i]!;
      if (!this.#mayStart(next.account)) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#take(next.account);
      next.start();
    }
  }
}
