/**
 * Key order is UTF-8 byte order, as the real store lists. `AFTER_ALL_KEYS` appended to a prefix
 * sorts after every key that starts with that prefix: no key can hold 257 U+10FFFF (4 bytes each)
 * within the 1024-byte key limit.
 */
export const AFTER_ALL_KEYS = '\u{10FFFF}'.repeat(257);
