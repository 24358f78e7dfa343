/**
 * The order a reader follows the documents in, and the docs test runs them in: the README, then
 * every page of docs/ in the order the README first links it. A test checks that every page is in
 * it (each is linked from the README).
 */
export function readingOrder(readme: string): string[] {
  const pages = ['README.md'];
  for (const [, target] of readme.matchAll(/\]\((docs\/[^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
    if (!pages.includes(target!)) pages.push(target!);
  }
  return pages;
}
