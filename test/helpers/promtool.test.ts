/** The promtool helper reports what promtool finds: a test that uses it cannot pass on a bad exposition. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkMetrics } from './promtool.ts';

test("checkMetrics: a clean exposition passes, a counter without _total is reported with promtool's words", { timeout: 60_000 }, async () => {
  const clean = '# HELP demo_lines_total Lines shipped.\n# TYPE demo_lines_total counter\ndemo_lines_total{log_job="1"} 3\n';
  assert.deepEqual(await checkMetrics(clean), { code: 0, problems: '' });
  const bad = await checkMetrics('# HELP demo_lines Lines shipped.\n# TYPE demo_lines counter\ndemo_lines 3\n');
  assert.notEqual(bad.code, 0);
  assert.match(bad.problems, /demo_lines counter metrics should have "_total" suffix/);
});
