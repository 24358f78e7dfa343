/**
 * Bundles JavaScript for workerd with esbuild: a script and the files it imports become one ES
 * module (as the platform's own tooling uploads them), and edgeport's modules that run inside
 * workerd (the store binding, the cache) are compiled from their TypeScript sources. Imports of
 * `node:*`, `cloudflare:*` and `workerd:*` are left to workerd, which decides what they give.
 */
import { build } from 'esbuild';

const RUNTIME_MODULES = ['node:*', 'cloudflare:*', 'workerd:*'];

/** One ES module with `entry` and everything it imports; throws with esbuild's messages when it cannot. */
export async function bundleModule(entry: string): Promise<string> {
  return (await bundleWithInputs(entry)).code;
}

/** A bundle, with what went into it: the source files it holds and the imports it leaves to workerd. */
export interface Bundle {
  code: string;
  /** Paths of the files bundled, relative to the working directory, as esbuild gives them. */
  inputs: string[];
  /** The imports left to workerd (`node:*`, `cloudflare:*`, `workerd:*`), static or dynamic. */
  externalImports: string[];
}

/** As bundleModule, with the bundle's inputs and external imports (test/runtime/workerd/inside-workerd.test.ts checks edgeport's own). */
export async function bundleWithInputs(entry: string): Promise<Bundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: RUNTIME_MODULES,
    logLevel: 'silent',
    // Class and function names stay as written: scripts and error messages see them.
    keepNames: true,
    metafile: true,
  });
  const outputs = Object.values(result.metafile.outputs);
  return {
    code: result.outputFiles[0]!.text,
    inputs: Object.keys(result.metafile.inputs),
    externalImports: outputs.flatMap((output) => output.imports.filter((imported) => imported.external).map((imported) => imported.path)),
  };
}

/** esbuild's messages for a failed build, one per line. */
export function bundleErrorMessage(error: unknown): string {
  const errors = (error as { errors?: Array<{ text: string; location?: { file: string; line: number; column: number } | null }> }).errors;
  if (!Array.isArray(errors)) return (error as Error).message;
  return errors.map(({ text, location }) => (location ? `${location.file}:${location.line}:${location.column}: ${text}` : text)).join('\n');
}
