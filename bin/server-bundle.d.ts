/** Types of bin/server-bundle.js (plain JavaScript, read before any TypeScript loader exists). */
export declare const BUNDLE_NAME: string;
export declare const BUILD_PREFIX: string;
export declare const MANIFEST_FILE: string;
export interface BundleManifest {
  root: string;
  build: string;
  inputs: Array<{ path: string; size: number; mtimeMs: number }>;
}
export declare function readManifest(dir: string): BundleManifest | null;
export declare function freshBundle(root: string, dir: string): string | null;
