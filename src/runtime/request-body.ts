/**
 * A request body inside a worker: a ReadableStream fed by chunks from the server thread, which
 * acknowledges what the script has read so the server reads the socket only as fast as the script.
 */
import { FLOW, FromWorker, type FromWorkerMessage } from './protocol.ts';

export class RequestBodySource {
  readonly stream: ReadableStream<Uint8Array>;
  readonly #id: number;
  readonly #post: (message: FromWorkerMessage) => void;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;
  #received = 0;
  #acked = 0;

  constructor(id: number, post: (message: FromWorkerMessage) => void) {
    this.#id = id;
    this.#post = post;
    // highWaterMark 0: pull() runs only when the script waits for data that has not arrived, i.e.
    // it has read everything so far; that is when the server may send more.
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => this.#acknowledge(),
      cancel: () => {
        this.#open = false;
      },
    }, { highWaterMark: 0 });
  }

  push(chunk: ArrayBuffer): void {
    if (!this.#open) return;
    this.#received += chunk.byteLength;
    this.#controller.enqueue(new Uint8Array(chunk));
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#controller.close();
  }

  abort(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#controller.error(new TypeError('The client closed the connection before sending the whole request body.'));
  }

  #acknowledge(): void {
    if (this.#received - this.#acked < FLOW.ackEveryBytes) return;
    this.#acked = this.#received;
    this.#post({ t: FromWorker.BodyAck, id: this.#id, bytes: this.#received });
  }
}
