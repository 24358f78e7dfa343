/**
 * Every case file of the bucket binding (`*.case.ts` in this folder), by its name: what
 * test/runtime/workerd/store-binding.test.ts runs inside workerd. A test there fails when a case
 * file is missing here.
 */
import { CASES as bindingErrors } from './binding-errors.case.ts';
import { CASES as bucket } from './bucket.case.ts';
import type { BindingCases } from './case-kit.ts';
import { CASES as checksums } from './checksums.case.ts';
import { CASES as conditional } from './conditional.case.ts';
import { CASES as hex } from './hex.case.ts';
import { CASES as httpMetadata } from './http-metadata.case.ts';
import { CASES as list } from './list.case.ts';
import { CASES as multipart } from './multipart.case.ts';
import { CASES as putDelete } from './put-delete.case.ts';
import { CASES as range } from './range.case.ts';
import { CASES as ssec } from './ssec.case.ts';
import { CASES as storeObject } from './store-object.case.ts';
import { CASES as validation } from './validation.case.ts';

export const CASE_FILES: Record<string, BindingCases> = {
  'binding-errors': bindingErrors,
  bucket,
  checksums,
  conditional,
  hex,
  'http-metadata': httpMetadata,
  list,
  multipart,
  'put-delete': putDelete,
  range,
  ssec,
  'store-object': storeObject,
  validation,
};
