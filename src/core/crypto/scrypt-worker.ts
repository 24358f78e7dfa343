/**
 * One worker thread running scryptSync, one derivation at a time, at a given nice value (Linux
 * keeps a nice value per thread, setpriority(2) "BUGS": it is set on the thread's own id). The
 * thread starts on first use, keeps the process alive only while a derivation is under way, and
 * is started again after it died. ScryptThread decides what runs where and when.
 */
import { Worker } from 'node:worker_threads';

/** Largest memory a derivation may use (N=16384, r=8 needs 16 MiB). */
const MAX_MEMORY_BYTES = 64 * 1024 * 1024;

const workerSource = (nice: number) => `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (${nice} !== 0) require('node:os').setPriority(tid, ${nice});
} catch {
  // Not Linux, or no /proc: the thread keeps the process's priority.
}
parentPort.on('message', (job) => {
  const started = performance.now();
  try {
    const derived = scryptSync(job.password, job.salt, job.keyLength, { N: job.N, r: job.r, p: job.p, maxmem: job.maxmem });
    const bytes = derived.buffer.slice(derived.byteOffset, derived.byteOffset + derived.length);
    parentPort.postMessage({ id: job.id, bytes, ms: performance.now() - started }, [bytes]);
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error && error.message || error) });
  }
});
`;

export interface ScryptJob {
  password: string;
  salt: Uint8Array;
  N: number;
  r: number;
  p: number;
  keyLength: number;
}

type FromWorker = { id: number; bytes: ArrayBuffer; ms: number } | { id: number; error: string };

interface Current {
  id: number;
  resolve(result: { bytes: Buffer; ms: number }): void;
  reject(error: Error): void;
}

export class ScryptWorker {
  readonly #nice: number;
  #worker: Worker | undefined;
  #current: Current | undefined;
  #nextId = 1;

  constructor(nice: number) {
    this.#nice = nice;
  }

  /** A derivation is under way. */
  get busy(): boolean {
    return this.#current !== undefined;
  }

  /** Runs one derivation (never call while busy); its bytes and the milliseconds it took on the thread. */
  run(job: ScryptJob): Promise<{ bytes: Buffer; ms: number }> {
    if (this.#current) return Promise.reject(new Error('The scrypt worker is busy.'));
    const worker = this.#started();
    const id = this.#nextId++;
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#current = { id, resolve, reject };
      // A copy of the salt's own bytes: a pooled Buffer's whole backing store would be cloned.
      worker.postMessage({ id, ...job, salt: new Uint8Array(job.salt), maxmem: MAX_MEMORY_BYTES });
    });
  }

  /** Ends the thread; a derivation under way is rejected with `error`. */
  async close(error: Error): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail(error);
    if (worker) await worker.terminate();
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    // Not the process's flags: the source is CommonJS whatever they say (e.g. --input-type=module).
    const worker = new Worker(workerSource(this.#nice), { eval: true, execArgv: [] });
    worker.unref();
    worker.on('message', (message: FromWorker) => {
      const current = this.#current;
      if (current === undefined || current.id !== message.id) return;
      this.#current = undefined;
      worker.unref();
      if ('error' in message) current.reject(new Error(`scrypt failed: ${message.error}`));
      else current.resolve({ bytes: Buffer.from(message.bytes), ms: message.ms });
    });
    const fail = (error: Error) => {
      // The next derivation starts a new thread.
      if (this.#worker === worker) this.#worker = undefined;
      this.#fail(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The scrypt thread exited (code ${code}).`)));
    this.#worker = worker;
    return worker;
  }

  #fail(error: Error): void {
    const current = this.#current;
    this.#current = undefined;
    current?.reject(error);
  }
}
