/**
 * Every Markdown document a user reads, in the groups the docs-examples tests run them in (one test
 * file per group, so the groups run side by side). A test checks that no document is left out.
 */
export const DOCUMENT_GROUPS = {
  readme: ['README.md'],
  services: ['docs/management-api.md', 'docs/edge-and-logs.md', 'docs/gateway.md'],
  store: ['docs/object-store.md', 'docs/s3.md', 'docs/dashboard.md'],
  operations: [
    'docs/configuration.md', 'docs/operations.md', 'docs/security.md', 'docs/performance.md', 'docs/choices.md',
    'docs/development.md', 'docs/errors.md',
  ],
} as const;
