// Strict lint from the first commit (STYLE.md §5): typescript-eslint's recommended rules on all code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', '.edgeport', '.edgeport-dev', 'dist', 'web/dist', 'test-results'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly',
        setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        setImmediate: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly',
        Response: 'readonly', Request: 'readonly', Headers: 'readonly', ReadableStream: 'readonly',
        Blob: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', fetch: 'readonly',
        AbortController: 'readonly', performance: 'readonly', SharedArrayBuffer: 'readonly', Atomics: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The dashboard runs in the browser.
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: {
      globals: {
        window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', navigator: 'readonly',
        XMLHttpRequest: 'readonly', File: 'readonly', FormData: 'readonly', HTMLElement: 'readonly', HTMLAnchorElement: 'readonly',
        MouseEvent: 'readonly', Event: 'readonly', AbortSignal: 'readonly', URLSearchParams: 'readonly',
      },
    },
  },
);
