// Strict lint from the first commit: typescript-eslint's recommended rules on all code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Node.js globals a script's isolate in workerd does not have (without nodejs_compat; Buffer and
 * process come with it only from compatibility date 2024-09-23, the others never).
 */
const NODE_GLOBALS = ['Buffer', 'process', 'global', 'require', 'module', 'exports', '__dirname', '__filename', 'setImmediate', 'clearImmediate'];

/**
 * The code that runs inside workerd, in the isolate of the script it serves: the modules under
 * src/runtime/workerd/inside/ and everything they import, and the binding's test cases, which run
 * there too (test/store/binding/*.case.ts). test/runtime/workerd/inside-workerd.test.ts checks that
 * this list covers every file those bundles hold, and that the bundles refer to no Node.js global.
 */
const INSIDE_WORKERD = [
  'src/runtime/workerd/inside/**/*.ts',
  'src/runtime/workerd/store-client.ts',
  'src/runtime/workerd/store-wire.ts',
  'src/store/binding/**/*.ts',
  'src/store/engine/errors.ts',
  'src/store/engine/types.ts',
  'src/store/engine/ranges.ts',
  'src/core/errors/edgeport-error.ts',
  'src/core/errors/backend-fault.ts',
  'test/store/binding/*.case.ts',
  'test/store/binding/case-kit.ts',
  'test/store/binding/all-cases.ts',
];

export default tseslint.config(
  { ignores: ['node_modules', '.edgeport', '.edgeport-dev', 'dist', 'web/dist', 'test-results'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        Response: 'readonly',
        Request: 'readonly',
        Headers: 'readonly',
        ReadableStream: 'readonly',
        Blob: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        performance: 'readonly',
        SharedArrayBuffer: 'readonly',
        Atomics: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Web APIs only: Node's globals and node:* modules exist in a script's isolate only as its
    // nodejs_compat flag gives them (docs/development.md).
    files: INSIDE_WORKERD,
    rules: {
      'no-restricted-globals': [
        'error',
        ...NODE_GLOBALS.map((name) => ({
          name,
          message: `${name} is Node.js's: this code runs inside workerd, where a script has it only with nodejs_compat. Use Web APIs (src/store/binding/hex.ts for hex).`,
        })),
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*'],
              allowTypeImports: true,
              message: 'This code runs inside workerd, where node:* modules exist only with nodejs_compat. Use Web APIs.',
            },
          ],
        },
      ],
    },
  },
  {
    // The dashboard runs in the browser.
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        history: 'readonly',
        navigator: 'readonly',
        XMLHttpRequest: 'readonly',
        File: 'readonly',
        FormData: 'readonly',
        HTMLElement: 'readonly',
        HTMLAnchorElement: 'readonly',
        MouseEvent: 'readonly',
        Event: 'readonly',
        AbortSignal: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
);
