/**
 * Builds the body of a get: the segments (inline bytes or blob slices) that cover the served
 * range, and a stream over them. Multipart objects map the range across their parts.
 */
import type { StoredData } from '../../db/metadata-store.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { StoreError } from './errors.ts';
import type { BodySegment, ObjectBody, ServedRange } from './types.ts';

/**
 * The bytes of part `part` (1-based) of a multipart object; part 1 of any other object is all of it.
 * A part beyond the last names the part asked for and how many there are (S3's error carries both).
 */
export function partRange(data: StoredData, part: number, size: number): ServedRange {
  const count = data.kind === 'parts' ? data.parts.length : 1;
  if (part < 1 || part > count) {
    throw new StoreError('STORE_INVALID_PART_NUMBER', { details: { partNumberRequested: part, actualPartCount: count } });
  }
  if (data.kind !== 'parts') return { offset: 0, length: size };
  let offset = 0;
  for (let i = 0; i < part - 1; i++) offset += data.parts[i]!.size;
  return { offset, length: data.parts[part - 1]!.size };
}

export function segmentsFor(data: StoredData, range: ServedRange): BodySegment[] {
  const end = range.offset + range.length;
  switch (data.kind) {
    case 'inline':
      return range.length === 0 ? [] : [{ kind: 'inline', bytes: data.bytes.subarray(range.offset, end) }];
    case 'blob':
      return range.length === 0 ? [] : [{ kind: 'blob', blobId: data.blobId, offset: range.offset, length: range.length }];
    case 'parts': {
      const segments: BodySegment[] = [];
      let partStart = 0;
      for (const part of data.parts) {
        const partEnd = partStart + part.size;
        const from = Math.max(range.offset, partStart);
        const to = Math.min(end, partEnd);
        if (to > from) segments.push({ kind: 'blob', blobId: part.blobId, offset: from - partStart, length: to - from });
        partStart = partEnd;
        if (partStart >= end) break;
      }
      return segments;
    }
  }
}

export function createObjectBody(blobs: BlobStore, segments: BodySegment[], length: number): ObjectBody {
  return {
    length,
    segments,
    // Methods, not arrow properties: tsx names every arrow property per call, a cost on each GET.
    stream() {
      return streamSegments(blobs, segments);
    },
    discard() {},
  };
}

async function* streamSegments(blobs: BlobStore, segments: readonly BodySegment[]): AsyncIterable<Uint8Array> {
  for (const segment of segments) {
    if (segment.kind === 'inline') yield segment.bytes;
    else if (segment.kind === 'stream') yield* segment.read();
    else yield* blobs.read(segment.blobId, segment.offset, segment.length);
  }
}
