/** Backpressure for responses written chunk by chunk. */

/**
 * What a body is written to: a node:http response, or the store service's own (store-http-server.ts).
 * Writes call back once their bytes are taken; 'drain' and 'close' are the socket's.
 */
export interface BodySink {
  readonly destroyed: boolean;
  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/**
 * Resolves on the response's next 'drain'; rejects if the client closes the connection first.
 * Each wait removes its own listeners, so a long body doesn't pile them up.
 */
export function drained(res: BodySink): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      reject(new Error('The client closed the connection.'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}
