// The package's `edgeport/store` entry, for plain `node` as well as tsx: edgeport's sources are
// TypeScript, so tsx's module hooks are registered first, as bin/edgeport.js does, and index.ts
// is loaded through them. Its exports are re-exported here; the types come from index.ts.
import { register } from 'tsx/esm/api';

register();
const store = await import('./index.ts');

export const { openStoreBucket, StoreBucket, LocalStoreBucket, GetResult, HeadResult } = store;
