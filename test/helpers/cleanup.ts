/**
 * What a test set up, undone when it ends (passed, failed, timed out or cancelled), last first: a
 * server started on a temporary directory is stopped before the directory is removed. `t.after`
 * alone runs hooks in the order they were registered, which would remove the directory first.
 */
import type { TestContext } from 'node:test';

const stacks = new WeakMap<object, Array<() => unknown>>();

/**
 * Runs `undo` when `t` ends, before everything registered on `t` earlier through this function.
 * `t` may also be a file's `{ after }` (node:test's top-level hook), for what a file's tests share.
 */
export function onTestEnd(t: Pick<TestContext, 'after'>, undo: () => unknown): void {
  let stack = stacks.get(t);
  if (stack === undefined) {
    const steps: Array<() => unknown> = [];
    stacks.set(t, steps);
    stack = steps;
    // Every step runs even when one before it fails; the first failure is the hook's.
    t.after(async () => {
      const failures: unknown[] = [];
      while (steps.length > 0) {
        try {
          await steps.pop()!();
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) throw failures[0];
    });
  }
  stack.push(undo);
}
