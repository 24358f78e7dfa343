/**
 * The script runtime: script configs, compatibility dates and flags, and the host that runs each
 * script in workerd, isolated from the server (docs/architecture.md, "Scripts run in workerd").
 */
export { COMPATIBILITY_FLAGS, type CompatibilityFlag } from './compat.ts';
export { RUNTIME_ERRORS, RuntimeError, SCRIPT_FAILURES, type RuntimeErrorCode, type ScriptFailure } from './errors.ts';
export { startScriptHost, type ScriptHost, type ScriptHostOptions } from './host.ts';
export { loadScriptConfig, parseScriptConfig, SCRIPT_LIMIT_DEFAULTS, type ScriptConfig, type ScriptLimits, type StoreBucketBinding } from './script-config.ts';
