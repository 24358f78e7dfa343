/** What edgeport's code inside workerd uses of workerd's `cloudflare:workers` module. */
declare module 'cloudflare:workers' {
  export class WorkerEntrypoint<Env = unknown> {
    protected readonly ctx: unknown;
    protected readonly env: Env;
    constructor(ctx: unknown, env: Env);
  }
}
