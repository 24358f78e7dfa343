/** Backpressure for responses written chunk by chunk. */
import type { ServerResponse } from 'node:http';

/**
 * Resolves on the response's next 'drain'; rejects if the client closes the connection first.
 * Each wait removes its own listeners, so a long body doesn't pile them up.
 */
export function drained(res: ServerResponse): Promise<void> {
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
