/** A real listener (src/cli/listener.ts) answering `ok` to every request, for the listener's limit and timeout tests. */
import type { TestContext } from 'node:test';
import { listen, type Listener } from '../../src/cli/listener.ts';
import type { ListenerLimits } from '../../src/config/limits.ts';
import { onTestEnd } from './cleanup.ts';

/** Listens on a free port with `limits` over the defaults; closed when `t` ends, after what the test opened later. */
export async function okListener(t: TestContext, limits: Partial<ListenerLimits>): Promise<Listener> {
  const listener = await listen(
    (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    },
    '127.0.0.1',
    0,
    'test listener',
    { limits },
  );
  onTestEnd(t, () => listener.close());
  return listener;
}
