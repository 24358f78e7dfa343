/** Requests through the edge as crash tests make them: the RayID of an answer received whole, or a failure. */
import { request, type RequestOptions } from 'node:http';

/**
 * Sends one request and resolves with the `edgeport-ray` of its answer once the answer has arrived
 * whole; rejects when the connection closes first (a server killed mid-response did not answer), or
 * when the answer has no RayID (it was shed before the edge handled it).
 */
export function answeredRay(options: RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(options);
    req.on('response', (res) => {
      res.resume();
      // An answer without a RayID never reached the edge's handler (a listener's load-shedding 503):
      // no record is made for it, so it must not count as a request whose line is owed.
      res.on('end', () => {
        const ray = res.headers['edgeport-ray'];
        if (typeof ray === 'string') resolve(ray);
        else reject(new Error(`answered ${res.statusCode} without an edgeport-ray (shed before the edge handled it)`));
      });
      res.on('close', () => {
        if (!res.complete) reject(new Error('response cut off'));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.on('close', () => reject(new Error('connection closed before an answer')));
    req.end();
  });
}
