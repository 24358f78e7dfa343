/** Compatibility rules of the binding (docs/object-store.md, "list() and metadata"). */

/** list() honours `include` from compatibility date 2022-08-04, or with the flag. */
export function listHonorsInclude(compatibilityDate: string, flags: readonly string[]): boolean {
  return flags.includes('store_list_honor_include') || compatibilityDate >= '2022-08-04';
}
