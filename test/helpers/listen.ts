/** A test's node:http server on a free port of 127.0.0.1, closed (its connections cut) when the test ends. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** Listens on a free port of 127.0.0.1 until the test ends; the port. */
export async function listen(server: Server, t: TestContext): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}
