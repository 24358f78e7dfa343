/**
 * The process's one EDR context. `EdrContext` "should only be called once" (its doc comment), so
 * every embedded chain of every gateway in the process shares it; providers are per chain.
 * EDR's API changes between minor versions: everything that touches
 * it lives in this folder, pinned to an exact version in package.json.
 */
import { EdrContext, L1_CHAIN_TYPE, l1ProviderFactory } from '@nomicfoundation/edr';

let context: Promise<EdrContext> | undefined;

export function edrContext(): Promise<EdrContext> {
  context ??= (async () => {
    const created = new EdrContext();
    await created.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return created;
  })();
  return context;
}
