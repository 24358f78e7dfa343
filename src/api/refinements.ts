/** How schema refinements report a problem: the real API's sentence, a pointer, and a catalog code. */
import type { z } from 'zod';
import type { ApiErrorCode } from './errors.ts';

export function refuse(ctx: z.RefinementCtx, path: PropertyKey[], message: string, apiCode?: ApiErrorCode): void {
  ctx.addIssue({ code: 'custom', message, path, ...(apiCode ? { params: { apiCode } } : {}) });
}

/**
 * `'<value>' is not a valid value for <field> because <reason>` at `path`; the field is named
 * from the issue's full path when it is turned into an envelope error (validation.ts).
 */
export function refuseValue(ctx: z.RefinementCtx, path: PropertyKey[], value: unknown, because: string, apiCode?: ApiErrorCode): void {
  ctx.addIssue({ code: 'custom', message: because, path, params: { value, because, ...(apiCode ? { apiCode } : {}) } });
}
