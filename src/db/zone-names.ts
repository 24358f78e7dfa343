/**
 * Zone names as both control stores compare them when a zone is created: a name may not equal, lie
 * under, or hold another account's zone (the edge routes a host to its most specific zone, so a
 * zone under another account's would take that account's traffic). The zones above a name are
 * looked up one indexed name each; the zones under it are one range of the reversed-name index
 * (migration 8).
 */

/** `shop.test` -> `tset.pohs`: the key of the `name_reversed` column. */
export function reversedName(name: string): string {
  let reversed = '';
  for (let i = name.length - 1; i >= 0; i--) reversed += name[i];
  return reversed;
}

/**
 * The names a zone could have above `name`, nearest first, down to two labels:
 * `a.b.shop.test` -> `b.shop.test`, `shop.test`. At most 126 (253 characters, two per label).
 */
export function ancestorNames(name: string): string[] {
  const names: string[] = [];
  let rest = name;
  for (;;) {
    const dot = rest.indexOf('.');
    // A zone has at least two labels: stop before a bare top-level label.
    if (dot < 0 || rest.indexOf('.', dot + 1) < 0) return names;
    rest = rest.slice(dot + 1);
    names.push(rest);
  }
}

/**
 * The `name_reversed` range of every zone under `name` (`*.shop.test`: from `tset.pohs.` up to, not
 * including, `tset.pohs/`, the next string in byte order after every string that starts with
 * `tset.pohs.`). Both bounds are exclusive; the low one is never a name (names do not end with a dot).
 */
export function descendantRange(name: string): { after: string; before: string } {
  const reversed = reversedName(name);
  return { after: `${reversed}.`, before: `${reversed}/` };
}

/**
 * The last two labels of a name: every zone above or under `name` has the same ones (names have at
 * least two labels), so creates that could conflict serialize on one lock per family (PostgreSQL).
 */
export function zoneFamily(name: string): string {
  const last = name.lastIndexOf('.');
  const before = last <= 0 ? -1 : name.lastIndexOf('.', last - 1);
  return name.slice(before + 1);
}
