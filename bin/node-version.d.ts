/** Types of bin/node-version.js (plain JavaScript, read before anything else is loaded). */
export declare const SUPPORTED_NODE: string;
export declare function nodeVersionProblem(version: string): string | null;
