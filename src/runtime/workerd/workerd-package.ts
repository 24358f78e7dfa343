/**
 * The installed `workerd` npm package: its binary, version, and the newest compatibility date its
 * release supports (what `workerd --version` prints). Read once, without starting anything.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const workerdPackage = require('workerd') as { default: string; compatibilityDate: string };
const { version } = require('workerd/package.json') as { version: string };

export const WORKERD = { binary: workerdPackage.default, compatibilityDate: workerdPackage.compatibilityDate, version } as const;
