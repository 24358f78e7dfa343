/** Requests through the edge as crash tests make them: the RayID of an answer received whole, or a failure. */
import { request, type RequestOptions } from 'node:http';

/**
 * Sends one request and resolves with the `edgeport-ray` of its answer once the answer has arrived
 * whole; rejects when the connection closes first (a server killed mid-response did not answer).
 */
export function answeredRay(options: RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(options);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.headers['edgeport-ray'])));
      res.on('close', () => { if (!res.complete) reject(new Error('response cut off')); });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.on('close', () => reject(new Error('connection closed before an answer')));
    req.end();
  });
}
