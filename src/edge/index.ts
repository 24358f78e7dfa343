/** The edge: zone routing, origin proxy and script dispatch, one log record per request. */
export { createEdgeService, type EdgeServiceOptions, type EdgeScript } from './edge-service.ts';
export { OriginPolicy, type ListenerAddress, type OriginPolicyOptions } from './origin-policy.ts';
export { parseRoutePattern } from './script-routes.ts';
export type { ZoneDirectory } from './zone-lookup.ts';
