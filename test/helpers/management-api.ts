/** Plain-fetch calls to the management API for end-to-end tests of other services (the API's own tests use the cloudflare SDK). */
import assert from 'node:assert/strict';

export interface ApiClient {
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

export function managementApi(base: string, email: string, key: string): ApiClient {
  return {
    async call(method, path, body) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-auth-email': email, 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const envelope = (await response.json()) as { success: boolean; result: unknown; errors: unknown[] };
      assert.ok(envelope.success, `${method} ${path} failed: ${JSON.stringify(envelope.errors)}`);
      return envelope.result as never;
    },
  };
}
