import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMPATIBILITY_FLAGS, compatibilityDateProblem, unknownCompatibilityFlags } from '../../src/runtime/compat.ts';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

test('a real date up to today is accepted', { timeout: 10_000 }, () => {
  assert.equal(compatibilityDateProblem('2022-08-04', NOW), undefined);
  assert.equal(compatibilityDateProblem('2026-11-22', NOW), undefined);
  assert.equal(compatibilityDateProblem('2024-02-29', NOW), undefined);
});

test('a date that is already today somewhere (UTC+14) is accepted; one beyond is not', { timeout: 10_000 }, () => {
  assert.equal(compatibilityDateProblem('2026-11-23', NOW), undefined);
  assert.match(compatibilityDateProblem('2026-11-24', NOW)!, /in the future/);
  assert.match(compatibilityDateProblem('2030-01-01', NOW)!, /in the future/);
});

test('malformed and impossible dates are named', { timeout: 10_000 }, () => {
  assert.match(compatibilityDateProblem('2025-1-1', NOW)!, /YYYY-MM-DD/);
  assert.match(compatibilityDateProblem('yesterday', NOW)!, /YYYY-MM-DD/);
  assert.match(compatibilityDateProblem('2025-02-30', NOW)!, /not a calendar date/);
  assert.match(compatibilityDateProblem('2023-02-29', NOW)!, /not a calendar date/);
  assert.match(compatibilityDateProblem('2025-13-01', NOW)!, /not a calendar date/);
});

test('known flags pass; unknown ones are returned by name', { timeout: 10_000 }, () => {
  assert.ok('store_list_honor_include' in COMPATIBILITY_FLAGS);
  assert.ok('nodejs_compat' in COMPATIBILITY_FLAGS);
  assert.deepEqual(unknownCompatibilityFlags(['nodejs_compat', 'store_list_honor_include']), []);
  assert.deepEqual(unknownCompatibilityFlags(['nodejs_compat', 'warp_drive', 'toString']), ['warp_drive', 'toString']);
});
