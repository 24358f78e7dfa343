/**
 * The table of not-provided.ts: the platform's features edgeport does not have, by path. First the
 * parts of the groups edgeport implements (accounts, user, memberships, zones, rulesets, log jobs,
 * R2, Workers), then the platform's other products by their first path segment under an account
 * or a zone. Order matters only where templates overlap: the first entry that matches names the
 * feature.
 */
import type { NotProvidedFeature } from './not-provided.ts';

const A = '/accounts/:account_id';
const Z = '/zones/:zone_id';

/** Parts of the groups edgeport implements. */
const WITHIN_GROUPS: NotProvidedFeature[] = [
  { feature: 'making, renaming or deleting accounts through the API', paths: ['/accounts'], methods: ['POST'], instead: 'the operator makes accounts with `edgeport accounts create <email>`' },
  { feature: 'renaming or deleting accounts through the API', paths: [A], methods: ['PUT', 'PATCH', 'DELETE'], instead: 'the operator manages accounts with `edgeport accounts`' },
  {
    feature: 'inviting, changing or removing account members', paths: [`${A}/members/**`, `${A}/roles/**`],
    instead: 'an edgeport account has one member, its owner (GET /accounts/<id>/members); give others access with API tokens (POST /accounts/<id>/tokens)',
  },
  { feature: 'leaving a membership', paths: ['/memberships/:membership_id'], methods: ['PATCH', 'DELETE'], instead: 'an account\'s one membership is its owner\'s' },
  { feature: 'editing the user\'s profile', paths: ['/user'], methods: ['PATCH', 'PUT'], instead: 'the user is the account\'s e-mail, which the operator sets' },
  { feature: 'invitations and organizations', paths: ['/user/invites/**', '/user/organizations/**', '/organizations/**', '/user/tenants/**', '/tenants/**'] },
  {
    feature: 'billing, plans and subscriptions',
    paths: [
      `${A}/subscriptions/**`, `${A}/bulk/**`, `${A}/billing/**`, `${A}/billable/**`, `${A}/billable-usage/**`, `${A}/invoices/**`, `${A}/pay-bad-debt/**`, `${A}/pay-invoice/**`,
      `${A}/payment-methods/**`, `${A}/receipts/**`, `${A}/entitlements/**`, `${Z}/subscription/**`, `${Z}/subscriptions/**`, `${Z}/available_plans/**`, `${Z}/available_rate_plans/**`, `${Z}/entitlements/**`,
      '/user/subscriptions/**', '/user/billing/**', '/billing/**',
    ],
    instead: 'everything this server offers is free of plans; the operator sets quotas ([quotas])',
  },
  { feature: 'audit logs', paths: [`${A}/logs/**`, `${A}/audit_logs/**`, '/user/audit_logs/**'], instead: 'the server log records what the API changed' },
  { feature: 'OAuth clients', paths: [`${A}/client-secret/**`, `${A}/oauth_clients/**`, '/oauth/**'], instead: 'use API tokens (POST /accounts/<id>/tokens)' },
  { feature: 'account speed and image transformation settings', paths: [`${A}/settings/**`] },
  {
    feature: 'zone activation, holds, plans of name servers, environments and zone settings',
    paths: [`${Z}/activation_check`, `${Z}/hold/**`, `${Z}/custom_ns/**`, `${Z}/environments/**`, `${Z}/settings/**`, `${Z}/ct/**`, `${Z}/observability/**`],
    instead: 'a zone here is a name with an origin (PATCH /zones/<id> sets origin and paused)',
  },
  { feature: 'account-level rulesets', paths: [`${A}/rulesets/**`], instead: 'the custom log fields rulesets belong to zones: /zones/<zone_id>/rulesets' },
  { feature: 'Instant Logs (edge log jobs)', paths: [`${Z}/logpush/edge/**`, `${Z}/logshipping/edge/**`], instead: 'log jobs deliver the zone\'s requests (/zones/<zone_id>/logpush/jobs); wrangler tail streams a script\'s' },
  {
    feature: 'account-level log jobs', paths: [`${A}/logpush/**`, `${A}/logshipping/**`],
    instead: 'log jobs belong to zones here: use /client/v4/zones/<zone_id>/logpush/jobs (or .../logshipping/jobs)',
  },
  { feature: 'the default fields of a dataset', paths: [`${Z}/logpush/datasets/:dataset_id/fields/default`, `${Z}/logshipping/datasets/:dataset_id/fields/default`], instead: 'GET .../datasets/http_requests/fields lists the fields; a job lists the ones it sends in output_options.field_names' },
  { feature: 'R2 bucket locks', paths: [`${A}/r2/buckets/:bucket/lock`], instead: 'a bucket here has no lock rules (GET answers none)' },
  { feature: 'Sippy (incremental migration into R2)', paths: [`${A}/r2/buckets/:bucket/sippy`], instead: 'a bucket here never migrates from another (GET answers enabled: false)' },
  { feature: 'R2 metrics', paths: [`${A}/r2/metrics`], instead: 'POST /graphql answers r2StorageAdaptiveGroups' },
  { feature: 'R2 temporary access credentials', paths: [`${A}/r2/temp-access-credentials`], instead: 'make an S3 access key limited to buckets and to reading: POST /accounts/<id>/store/access-keys' },
  { feature: 'R2 event notifications', paths: [`${A}/event_notifications/**`], instead: 'edgeport has no Queues to notify (GET of a bucket\'s configuration answers none)' },
  { feature: 'Super Slurper (migrating buckets into R2)', paths: [`${A}/slurper/**`], instead: 'copy objects with any S3 client to the S3-compatible API' },
  { feature: 'the R2 Data Catalog', paths: [`${A}/r2-catalog/**`] },
  { feature: 'Workers static assets', paths: [`${A}/workers/assets/**`, `${A}/workers/scripts/:script_name/assets-upload-session`], instead: 'serve files from an R2 bucket bound to the script' },
  { feature: 'Cron Triggers', paths: [`${A}/workers/scripts/:script_name/schedules`], instead: 'scripts run on requests only' },
  { feature: 'script environments', paths: [`${A}/workers/services/:script_name/environments/**`], instead: 'a script here has one environment, production: /accounts/<id>/workers/scripts/<name>' },
  {
    feature: 'Workers made without code, and their versions under workers/workers', paths: [`${A}/workers/workers`, `${A}/workers/workers/:worker_id/**`],
    instead: 'upload a script with PUT /accounts/<id>/workers/scripts/<name>; its versions are under .../workers/scripts/<name>/versions',
  },
  { feature: 'Workers Observability (Workers Logs, destinations, queries)', paths: [`${A}/workers/observability/**`], instead: 'wrangler tail streams a script\'s requests and console output' },
  { feature: 'Durable Objects', paths: [`${A}/workers/durable_objects/**`] },
  { feature: 'Workers for Platforms (dispatch namespaces)', paths: [`${A}/workers/dispatch/**`] },
];

/** The platform's other products under an account, by their first path segment. */
const ACCOUNT_PRODUCTS: Record<string, string> = {
  storage: 'Workers KV', d1: 'D1 databases', queues: 'Queues', pages: 'Pages', hyperdrive: 'Hyperdrive', vectorize: 'Vectorize', ai: 'Workers AI',
  'ai-gateway': 'AI Gateway', 'ai-search': 'AI Search', workflows: 'Workflows', containers: 'Containers', secrets_store: 'Secrets Store', pipelines: 'Pipelines',
  images: 'Images', stream: 'Stream', 'browser-rendering': 'Browser Rendering', email: 'Email Routing', 'email-security': 'Email Security', mtls_certificates: 'mTLS certificates',
  dns_records: 'DNS', dns_settings: 'DNS', dns_firewall: 'DNS Firewall', secondary_dns: 'secondary DNS', load_balancers: 'Load Balancing', registrar: 'Registrar',
  'registrar-sandbox': 'Registrar', access: 'Zero Trust Access', gateway: 'Zero Trust Gateway', devices: 'Zero Trust devices', dlp: 'Data Loss Prevention', dex: 'Digital Experience Monitoring',
  zerotrust: 'Zero Trust', zt_risk_scoring: 'Zero Trust risk scoring', teamnet: 'Zero Trust networks', tunnels: 'Cloudflare Tunnel', cfd_tunnel: 'Cloudflare Tunnel',
  warp_connector: 'WARP Connector', one: 'Cloudflare One', connectivity: 'Workers VPC', magic: 'Magic Transit and Magic WAN', cni: 'Network Interconnect', pcaps: 'packet captures',
  mnm: 'Magic Network Monitoring', addressing: 'IP addressing', calls: 'Realtime (Calls)', realtime: 'Realtime', rum: 'Web Analytics', analytics: 'account analytics',
  alerting: 'notifications (alerting)', intel: 'Threat Intelligence', 'cloudforce-one': 'Cloudforce One', urlscanner: 'URL Scanner', 'brand-protection': 'Brand Protection',
  'security-center': 'Security Center', botnet_feed: 'the botnet threat feed', 'abuse-reports': 'abuse reports', challenges: 'Turnstile', rules: 'account lists and rules',
  iam: 'IAM (user groups, resource groups)', sso_connectors: 'single sign-on', shares: 'resource sharing', 'resource-library': 'the resource library', tags: 'resource tags',
  infrastructure: 'infrastructure targets', diagnostics: 'network diagnostics', 'request-tracer': 'the request tracer', 'data-security': 'data security',
  'managed-defense': 'managed defense', 'event_subscriptions': 'event subscriptions', flagship: 'Flagship', 'basin-catalog': 'the data catalog', dls: 'Data Localization Suite',
  vuln_scanner: 'the vulnerability scanner', moq: 'Media over QUIC', field_extractors: 'field extractors', custom_pages: 'custom error pages', custom_csrs: 'custom CSRs',
  waiting_rooms: 'Waiting Room', custom_ns: 'custom name servers',
};

/** The platform's other products under a zone, by their first path segment. */
const ZONE_PRODUCTS: Record<string, string> = {
  dns_records: 'DNS', dns_settings: 'DNS', dnssec: 'DNSSEC', dns_analytics: 'DNS analytics', secondary_dns: 'secondary DNS', purge_cache: 'cache purging',
  invalidate_cache: 'cache purging', cache: 'cache settings', ssl: 'TLS certificates', custom_certificates: 'TLS certificates', keyless_certificates: 'Keyless SSL',
  certificate_authorities: 'TLS certificate authorities', client_certificates: 'client certificates', origin_tls_client_auth: 'authenticated origin pulls',
  acm: 'Advanced Certificate Manager', dcv_delegation: 'DCV delegation', custom_hostnames: 'custom hostnames (SSL for SaaS)', hostnames: 'hostname settings',
  firewall: 'firewall rules', filters: 'firewall filters', rate_limits: 'rate limiting rules', pagerules: 'Page Rules', waiting_rooms: 'Waiting Room', spectrum: 'Spectrum',
  page_shield: 'Page Shield', bot_management: 'Bot Management', argo: 'Argo', healthchecks: 'health checks', snippets: 'Snippets', api_gateway: 'API Shield',
  schema_validation: 'API schema validation', token_validation: 'API token validation', 'content-upload-scan': 'content scanning', 'leaked-credential-checks': 'leaked credential checks',
  fraud_detection: 'fraud detection', managed_headers: 'managed transforms', url_normalization: 'URL normalization', web3: 'Web3 gateways', email: 'Email Routing',
  speed_api: 'the speed test API', cloud_connector: 'Cloud Connector', origin: 'origin settings', 'ai-audit': 'AI Audit', 'ai-security': 'AI security', devices: 'Zero Trust devices',
  logs: 'Logpull (logs received)', addressing: 'IP addressing', intel: 'Threat Intelligence', precursor: 'Precursor', 'security-center': 'Security Center', tags: 'resource tags',
  access: 'Zero Trust Access', load_balancers: 'Load Balancing', custom_pages: 'custom error pages', custom_csrs: 'custom CSRs',
};

/** Platform paths outside accounts and zones. */
const GLOBAL: NotProvidedFeature[] = [
  { feature: 'Cloudflare Radar', paths: ['/radar/**'] },
  { feature: 'the platform\'s IP ranges', paths: ['/ips'], instead: 'edgeport\'s edge answers on the addresses its operator gives it' },
  { feature: 'origin CA certificates', paths: ['/certificates/**'] },
  { feature: 'Pages assets', paths: ['/pages/**'] },
  { feature: 'user-level load balancers and analytics', paths: ['/user/load_balancers/**', '/user/load_balancing_analytics/**', '/user/spectrum_analytics/**', '/user/firewall/**'] },
];

export const NOT_PROVIDED_FEATURES: readonly NotProvidedFeature[] = [
  ...WITHIN_GROUPS,
  ...Object.entries(ACCOUNT_PRODUCTS).map(([segment, feature]) => ({ feature, paths: [`${A}/${segment}/**`] })),
  ...Object.entries(ZONE_PRODUCTS).map(([segment, feature]) => ({ feature, paths: [`${Z}/${segment}/**`] })),
  ...GLOBAL,
];
