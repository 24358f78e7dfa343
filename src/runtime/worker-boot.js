// First module of a script worker. Node 20 ignores `--import` in a worker's execArgv, so tsx's
// hooks are registered here, as bin/edgeport.js does for the main thread, before the TypeScript loads.
import { register } from 'tsx/esm/api';

register();
await import('./worker-entry.ts');
