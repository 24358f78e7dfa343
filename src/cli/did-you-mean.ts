/**
 * "Did you mean" for mistyped commands and options: the known name closest to what was typed, by
 * edit distance with adjacent transpositions (`--data-dri` is one step from `--data-dir`), or the
 * one known name that begins with it (`--gateway` for `--gateway-port`).
 */

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * adjacent characters each cost 1 (Levenshtein counts a swap as 2).
 */
export function editDistance(a: string, b: string): number {
  // Three rows of the dynamic programme: two back (for swaps), one back, and the current one.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** How many edits still look like a typo of a word this long (a third of it, at least one). */
function tolerance(length: number): number {
  return Math.max(1, Math.floor(length / 3));
}

/**
 * The candidate `input` most likely meant, or undefined when none is close (case is ignored).
 * Ties go to the candidate listed first.
 */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const typed = input.toLowerCase();
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= tolerance(Math.max(typed.length, 1)) && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  if (best !== undefined) return best.candidate;
  const extended = candidates.filter((candidate) => typed.length >= 2 && candidate.toLowerCase().startsWith(typed));
  return extended.length === 1 ? extended[0] : undefined;
}
