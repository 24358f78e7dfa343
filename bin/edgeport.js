#!/usr/bin/env node
// The `edgeport` command. Sources are TypeScript, loaded through tsx's module hooks; the worker
// threads that host scripts are started with `--import tsx` (src/runtime/worker-pool.ts).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
