/** Types of bin/server-bundle.js (plain JavaScript, read before any TypeScript loader exists). */
export declare const BUNDLE_NAME: string;
export declare const BUILD_PREFIX: string;
export declare const MANIFEST_FILE: string;
export declare function freshBundle(root: string, dir: string): string | null;
