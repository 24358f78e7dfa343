/**
 * Runs requests through a script inside a worker: builds each Request from the server's messages,
 * calls `fetch(request, env, ctx)` (many at once, like workerd), and sends back the Response.
 */
import { ExecutionContext } from './execution-context.ts';
import { describeError, FromWorker, ToWorker, type RequestMessage, type ToWorkerMessage } from './protocol.ts';
import { RequestBodySource } from './request-body.ts';
import { sendResponse, type Post, type ResponseFlow } from './response-sender.ts';

/** A script module's default export. */
export interface ScriptHandler {
  fetch(request: Request, env: Record<string, unknown>, ctx: ExecutionContext): unknown;
}

export interface RunnerLink {
  post: Post;
  /** Counts work in progress (requests and waitUntil promises) for the CPU watchdog. */
  busy(delta: 1 | -1): void;
}

export class ScriptRunner {
  readonly #link: RunnerLink;
  readonly #handler: ScriptHandler;
  readonly #env: Record<string, unknown>;
  readonly #bodies = new Map<number, RequestBodySource>();
  readonly #flows = new Map<number, ResponseFlow>();
  readonly #track: (promise: Promise<unknown>) => void;

  constructor(link: RunnerLink, handler: ScriptHandler, env: Record<string, unknown>) {
    this.#link = link;
    this.#handler = handler;
    this.#env = env;
    this.#track = (promise) => {
      link.busy(1);
      promise.then(undefined, (error: unknown) => {
        link.post({ t: FromWorker.Log, level: 'warn', msg: 'A promise passed to waitUntil() rejected.', error: describeError(error) });
      }).finally(() => link.busy(-1));
    };
  }

  /** Handles one message from the server thread. */
  receive(message: ToWorkerMessage): void {
    switch (message.t) {
      case ToWorker.Request:
        void this.#run(message);
        break;
      case ToWorker.BodyChunk:
        this.#bodies.get(message.id)?.push(message.chunk);
        break;
      case ToWorker.BodyEnd:
        this.#bodies.get(message.id)?.end();
        break;
      case ToWorker.Abort:
        this.#bodies.get(message.id)?.abort();
        this.#flows.get(message.id)?.abort();
        break;
      case ToWorker.ResponseAck:
        this.#flows.get(message.id)?.ack(message.bytes);
        break;
    }
  }

  async #run(message: RequestMessage): Promise<void> {
    const { id, method } = message;
    const post = this.#link.post;
    this.#link.busy(1);
    const ctx = new ExecutionContext(this.#track);
    try {
      let body: ReadableStream<Uint8Array> | null = null;
      if (message.hasBody) {
        const source = new RequestBodySource(id, post);
        this.#bodies.set(id, source);
        body = source.stream;
      }
      const request = new Request(message.url, { method, body, duplex: 'half' } as RequestInit);
      // Appending to the request's own headers skips building a Headers object only to copy it.
      const headers = request.headers;
      const raw = message.headers;
      for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
      const response = await this.#handler.fetch(request, this.#env, ctx);
      if (!(response instanceof Response)) {
        throw new TypeError(`The script's fetch() must return a Response, but it returned ${describeValue(response)}.`);
      }
      await sendResponse(post, id, response, method === 'HEAD', this.#flows);
    } catch (error) {
      post({ t: FromWorker.Error, id, error: describeError(error), passThrough: ExecutionContext.passesThrough(ctx) });
    } finally {
      this.#bodies.delete(id);
      this.#link.busy(-1);
    }
  }
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  return `a ${typeof value}`;
}
