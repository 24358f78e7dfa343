/**
 * The one internal error type. Every engine throws only EdgeportError subclasses; each surface
 * (API envelope, JSON-RPC, S3 XML, script exceptions) maps `code` to its wire shape exactly once.
 */
export type ErrorKind = 'user' | 'system';

/** A service's catalog: one entry per code, so a surface's mapper can be typed over every code. */
export type ErrorCatalog<Code extends string> = Record<Code, { kind: ErrorKind; message: string }>;

export class EdgeportError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: Code, kind: ErrorKind, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.kind = kind;
    this.details = options?.details;
  }
}
