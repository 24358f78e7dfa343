/**
 * The JSON-RPC blockchain gateway (docs/gateway.md): `POST /v1/<network>` with
 * JSON-RPC 2.0, each network served by upstream nodes or the embedded chain (Hardhat's EVM, in
 * process), with method policy, cache, rate limit and metrics. `edgeport start` puts the handler
 * on the gateway port.
 */
export { createGatewayService, type GatewayService, type GatewayServiceOptions, type GatewayNetworkStatus } from './gateway-service.ts';
export { toGatewayConfig, type GatewayConfig, type GatewayNetworkConfig, type GatewayBackendConfig } from '../config/gateway.ts';
export { GATEWAY_DEFAULTS } from '../config/defaults.ts';
export { GATEWAY_ERRORS, type GatewayErrorCode } from './errors.ts';
export { DEV_ACCOUNTS, DEV_MNEMONIC } from './backends/dev-accounts.ts';
