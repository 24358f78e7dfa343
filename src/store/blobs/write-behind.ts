/**
 * The write-behind buffer both blob writers stream through: incoming chunks are copied into a
 * buffer of at most `batchBytes`, and a buffer is handed to `send` while the next one fills. So a
 * writer holds at most two buffers and has one send in flight; `write` waits when both are full.
 * A send that fails is reported by the next `write` or `flush`. Callers may reuse their chunks at
 * once (the bytes are copied).
 */

export interface WriteBehindOptions {
  batchBytes: number;
  /**
   * Send a partly filled buffer whenever no send is in flight (disk writes: the body goes out
   * behind the caller at once). Otherwise only full buffers are sent before `flush` (S3 parts,
   * which must be large).
   */
  eager?: boolean;
  /** Awaited once, by the write or flush that starts the first send, before it (S3: creating the multipart upload). */
  open?: () => Promise<void>;
  /** The first buffer's size, doubled as it fills up to `batchBytes`, so a small body stays small. Default: `batchBytes`. */
  initialBytes?: number;
}

export class WriteBehind {
  readonly #send: (bytes: Buffer) => Promise<void>;
  readonly #batchBytes: number;
  readonly #eager: boolean;
  readonly #initialBytes: number;
  readonly #open: (() => Promise<void>) | undefined;
  #buffer: Buffer | undefined;
  #filled = 0;
  /** A full-size buffer back from a finished send, for the next one. */
  #spare: Buffer | undefined;
  #inFlight: Promise<void> | undefined;
  #failure: { error: unknown } | undefined;
  #sent = false;

  constructor(send: (bytes: Buffer) => Promise<void>, options: WriteBehindOptions) {
    this.#send = send;
    this.#batchBytes = options.batchBytes;
    this.#eager = options.eager ?? false;
    this.#initialBytes = options.initialBytes ?? options.batchBytes;
    this.#open = options.open;
  }

  /** Whether any send has started (before that, every byte is still in `takeUnsent`). */
  get sent(): boolean {
    return this.#sent;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.#throwIfFailed();
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.#filled === this.#batchBytes) await this.#sendBuffer();
      const take = Math.min(this.#batchBytes - this.#filled, chunk.byteLength - at);
      this.#room(this.#filled + take).set(take === chunk.byteLength ? chunk : chunk.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
    }
    if (this.#eager && !this.#inFlight && this.#filled > 0) await this.#startSending();
  }

  /** Sends what is buffered and waits for every send; throws the failure of any. */
  async flush(): Promise<void> {
    if (this.#filled > 0) await this.#sendBuffer();
    await this.#inFlight;
    this.#throwIfFailed();
  }

  /** Waits for the send in flight, whatever its outcome (before the writes are thrown away). */
  async settle(): Promise<void> {
    await this.#inFlight;
  }

  /** The bytes buffered and not sent, taken out (a body that never filled a batch goes another way). */
  takeUnsent(): Buffer {
    const bytes = this.#buffer?.subarray(0, this.#filled) ?? Buffer.alloc(0);
    this.#buffer = undefined;
    this.#filled = 0;
    return bytes;
  }

  async #sendBuffer(): Promise<void> {
    await this.#inFlight;
    this.#throwIfFailed();
    await this.#startSending();
  }

  async #startSending(): Promise<void> {
    if (!this.#sent && this.#open) await this.#open();
    this.#start();
  }

  #start(): void {
    const buffer = this.#buffer!;
    const bytes = buffer.subarray(0, this.#filled);
    this.#buffer = undefined;
    this.#filled = 0;
    this.#sent = true;
    this.#inFlight = this.#send(bytes)
      .then(
        () => {
          if (buffer.byteLength === this.#batchBytes) this.#spare = buffer;
        },
        (error: unknown) => {
          this.#failure ??= { error };
        },
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
  }

  /** The buffer, grown to hold `needed` bytes: doubling up to a batch at first, whole batches once sending. */
  #room(needed: number): Buffer {
    const current = this.#buffer;
    if (current && current.byteLength >= needed) return current;
    const size = this.#sent ? this.#batchBytes : Math.min(this.#batchBytes, Math.max(needed, this.#initialBytes, (current?.byteLength ?? 0) * 2));
    let grown: Buffer;
    if (size === this.#batchBytes && this.#spare) {
      grown = this.#spare;
      this.#spare = undefined;
    } else {
      grown = Buffer.allocUnsafe(size);
    }
    if (current) current.copy(grown, 0, 0, this.#filled);
    this.#buffer = grown;
    return grown;
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}
