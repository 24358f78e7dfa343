/**
 * Sampling (output_options.sample_rate, applied after the filter): whether a record is kept is a
 * pure function of its RayID and the rate, so re-running the same traffic keeps the same lines.
 */

/** A uniform value in [0, 1) derived from the RayID (FNV-1a, then a murmur3 finaliser to mix). */
export function rayFraction(rayId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < rayId.length; i++) {
    h ^= rayId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 0x1_0000_0000;
}

export function isSampled(rayId: string, sampleRate: number): boolean {
  return sampleRate >= 1 || rayFraction(rayId) < sampleRate;
}
