// Builds the dashboard (web/src, TypeScript + Preact) into web/dist, which the management API's
// listener serves. Vite 8's own transformer (oxc) compiles JSX for Preact's automatic runtime.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // One small bundle: no module preload polyfill (every supported browser has modulepreload).
    modulePreload: { polyfill: false },
  },
});
