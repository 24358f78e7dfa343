/**
 * The fields of the `http_requests` log dataset, as the real service names them: their names,
 * value types and descriptions. Log jobs pick `field_names` from it, filters compare its fields,
 * and `GET .../logshipping/datasets/http_requests/fields` lists it.
 */

/**
 * How a field's value is typed in a record: `timestamp` is an integer for `unixnano`/`unix` and a
 * string for `rfc3339`; `object` holds custom fields (RequestHeaders, ResponseHeaders, Cookies).
 */
export type HttpRequestsFieldType = 'string' | 'int' | 'float' | 'bool' | 'timestamp' | 'string[]' | 'int[]' | 'object';

export interface HttpRequestsField {
  type: HttpRequestsFieldType;
  description: string;
  /** Still accepted, but the real service marks it deprecated. */
  deprecated?: true;
}

export const HTTP_REQUESTS_FIELDS = {
  BotDetectionIDs: { type: 'int[]', description: 'IDs of the bot detections that matched the request.' },
  BotDetectionTags: { type: 'string[]', description: 'Tags of the bot detections that matched the request.' },
  BotScore: { type: 'int', description: 'Bot score, 1 (likely automated) to 99 (likely human).' },
  BotScoreSrc: { type: 'string', description: 'Detection engine that produced the bot score.' },
  BotTags: { type: 'string[]', description: 'Additional information about the bot score.' },
  CacheCacheStatus: { type: 'string', description: 'Cache status: hit, miss, expired, bypass, dynamic and so on.' },
  CacheReserveUsed: { type: 'bool', description: 'Whether the response was served from the cache reserve.' },
  CacheResponseBytes: { type: 'int', description: 'Bytes of the response returned by the cache.' },
  CacheResponseStatus: { type: 'int', description: 'HTTP status returned by the cache.', deprecated: true },
  CacheTieredFill: { type: 'bool', description: 'Whether the response was filled from an upper cache tier.' },
  ClientASN: { type: 'int', description: 'Autonomous system number of the client.' },
  ClientCity: { type: 'string', description: 'Approximate city of the client.' },
  ClientCountry: { type: 'string', description: 'Two-letter country code of the client.' },
  ClientDeviceType: { type: 'string', description: 'Client device type.' },
  ClientIP: { type: 'string', description: 'IP address of the client.' },
  ClientIPClass: { type: 'string', description: 'Class of the client IP (clean, searchEngine, tor and so on).' },
  ClientLatitude: { type: 'string', description: 'Approximate latitude of the client.' },
  ClientLongitude: { type: 'string', description: 'Approximate longitude of the client.' },
  ClientMTLSAuthCertFingerprint: { type: 'string', description: 'SHA-256 fingerprint of the client certificate (mTLS).' },
  ClientMTLSAuthStatus: { type: 'string', description: 'Status of the mTLS authentication.' },
  ClientRegionCode: { type: 'string', description: 'ISO-3166-2 region code of the client.' },
  ClientRequestBytes: { type: 'int', description: 'Bytes of the client request.' },
  ClientRequestHost: { type: 'string', description: 'Host requested by the client.' },
  ClientRequestMethod: { type: 'string', description: 'HTTP method of the client request.' },
  ClientRequestPath: { type: 'string', description: 'URI path requested by the client, without the query.' },
  ClientRequestProtocol: { type: 'string', description: 'HTTP protocol of the client request.' },
  ClientRequestReferer: { type: 'string', description: 'Referer header of the client request.' },
  ClientRequestScheme: { type: 'string', description: 'URL scheme of the client request (http or https).' },
  ClientRequestSource: { type: 'string', description: 'Whether the request came from an eyeball or from a script.' },
  ClientRequestURI: { type: 'string', description: 'URI requested by the client: path and query.' },
  ClientRequestUserAgent: { type: 'string', description: 'User agent of the client request.' },
  ClientSSLCipher: { type: 'string', description: 'TLS cipher of the client connection.' },
  ClientSSLProtocol: { type: 'string', description: 'TLS protocol of the client connection ("none" without TLS).' },
  ClientSrcPort: { type: 'int', description: 'Source port of the client connection.' },
  ClientTCPRTTMs: { type: 'int', description: 'Smoothed TCP round-trip time to the client, in milliseconds.' },
  ClientXRequestedWith: { type: 'string', description: 'X-Requested-With header of the client request.' },
  ContentScanObjResults: { type: 'string[]', description: 'Results of the content scans of the request.' },
  ContentScanObjSizes: { type: 'int[]', description: 'Sizes of the scanned content objects.' },
  ContentScanObjTypes: { type: 'string[]', description: 'Types of the scanned content objects.' },
  Cookies: { type: 'object', description: 'Configured cookies (custom fields) and their values.' },
  EdgeCFConnectingO2O: { type: 'bool', description: 'Whether the request came from a proxied zone (orange-to-orange).' },
  EdgeColoCode: { type: 'string', description: 'IATA code of the edge location.' },
  EdgeColoID: { type: 'int', description: 'ID of the edge location.' },
  EdgeEndTimestamp: { type: 'timestamp', description: 'When the edge finished sending the response to the client.' },
  EdgePathingOp: { type: 'string', description: 'Type of operation the edge performed on the request.' },
  EdgePathingSrc: { type: 'string', description: 'Source of the edge decision.' },
  EdgePathingStatus: { type: 'string', description: 'Status of the edge decision.' },
  EdgeRequestHost: { type: 'string', description: 'Host sent by the edge to the origin.' },
  EdgeResponseBodyBytes: { type: 'int', description: 'Bytes of the response body sent to the client.' },
  EdgeResponseBytes: { type: 'int', description: 'Bytes of the response sent to the client, headers included.' },
  EdgeResponseCompressionRatio: { type: 'float', description: 'Compression ratio of the response.' },
  EdgeResponseContentType: { type: 'string', description: 'Content-Type of the response sent to the client.' },
  EdgeResponseStatus: { type: 'int', description: 'HTTP status sent to the client.' },
  EdgeServerIP: { type: 'string', description: 'IP address of the edge server that served the request.' },
  EdgeStartTimestamp: { type: 'timestamp', description: 'When the edge received the request.' },
  EdgeTimeToFirstByteMs: { type: 'int', description: 'Milliseconds from the request to the first response byte.' },
  FraudAttack: { type: 'string', description: 'Kind of fraud attack detected.' },
  FraudDetectionIDs: { type: 'int[]', description: 'IDs of the fraud detections that matched.' },
  FraudDetectionTags: { type: 'string[]', description: 'Tags of the fraud detections that matched.' },
  FraudEmailRisk: { type: 'string', description: 'Risk of the e-mail address in the request.' },
  FraudUserID: { type: 'string', description: 'User identifier used by fraud detection.' },
  JA3Hash: { type: 'string', description: 'JA3 fingerprint of the client TLS hello.' },
  JA4: { type: 'string', description: 'JA4 fingerprint of the client TLS hello.' },
  JA4Signals: { type: 'object', description: 'Signals derived from the JA4 fingerprint.' },
  JSDetectionPassed: { type: 'string', description: 'Whether the JavaScript detection passed.' },
  LeakedCredentialCheckResult: { type: 'string', description: 'Result of the leaked credential check.' },
  OriginDNSResponseTimeMs: { type: 'int', description: 'Milliseconds to resolve the origin name.' },
  OriginIP: { type: 'string', description: 'IP address of the origin server.' },
  OriginRequestHeaderSendDurationMs: { type: 'int', description: 'Milliseconds to send the request headers to the origin.' },
  OriginResponseBytes: { type: 'int', description: 'Bytes of the origin response.', deprecated: true },
  OriginResponseDurationMs: { type: 'int', description: 'Milliseconds from the origin request to the full origin response.' },
  OriginResponseHTTPExpires: { type: 'string', description: 'Expires header of the origin response.' },
  OriginResponseHTTPLastModified: { type: 'string', description: 'Last-Modified header of the origin response.' },
  OriginResponseHeaderReceiveDurationMs: { type: 'int', description: 'Milliseconds to receive the origin response headers.' },
  OriginResponseStatus: { type: 'int', description: 'HTTP status of the origin response (0 without one).' },
  OriginResponseTime: { type: 'int', description: 'Nanoseconds to receive the origin response.', deprecated: true },
  OriginSSLProtocol: { type: 'string', description: 'TLS protocol of the origin connection.' },
  OriginTCPHandshakeDurationMs: { type: 'int', description: 'Milliseconds of the TCP handshake with the origin.' },
  OriginTLSHandshakeDurationMs: { type: 'int', description: 'Milliseconds of the TLS handshake with the origin.' },
  ParentRayID: { type: 'string', description: 'Ray ID of the parent request, for script subrequests.' },
  PayPerCrawlStatus: { type: 'string', description: 'Pay-per-crawl status of the request.' },
  RayID: { type: 'string', description: 'ID of the request (16 lowercase hex characters).' },
  RequestHeaders: { type: 'object', description: 'Configured request headers (custom fields) and their values.' },
  ResponseHeaders: { type: 'object', description: 'Configured response headers (custom fields) and their values.' },
  SecurityAction: { type: 'string', description: 'Action of the security rule that matched last.' },
  SecurityActions: { type: 'string[]', description: 'Actions of the security rules that matched.' },
  SecurityRuleDescription: { type: 'string', description: 'Description of the security rule that matched last.' },
  SecurityRuleID: { type: 'string', description: 'ID of the security rule that matched last.' },
  SecurityRuleIDs: { type: 'string[]', description: 'IDs of the security rules that matched.' },
  SecuritySources: { type: 'string[]', description: 'Security products that matched the request.' },
  SmartRouteColoID: { type: 'int', description: 'ID of the location used by smart routing to reach the origin.' },
  UpperTierColoID: { type: 'int', description: 'ID of the upper-tier location used to reach the origin.' },
  VerifiedBotCategory: { type: 'string', description: 'Category of the verified bot.' },
  WAFAttackScore: { type: 'int', description: 'Overall WAF attack score.' },
  WAFFlags: { type: 'string', description: 'Additional WAF settings.', deprecated: true },
  WAFMatchedVar: { type: 'string', description: 'Variable matched by the WAF.', deprecated: true },
  WAFRCEAttackScore: { type: 'int', description: 'WAF score for remote code execution attacks.' },
  WAFSQLiAttackScore: { type: 'int', description: 'WAF score for SQL injection attacks.' },
  WAFXSSAttackScore: { type: 'int', description: 'WAF score for cross-site scripting attacks.' },
  WebAssetsLabelsManaged: { type: 'string[]', description: 'Managed labels of the web asset.' },
  WebAssetsOperationID: { type: 'string', description: 'ID of the web asset operation.' },
  WorkerCPUTime: { type: 'int', description: 'CPU time the script used, in microseconds.' },
  WorkerScriptName: { type: 'string', description: 'Name of the script that handled the request.' },
  WorkerStatus: { type: 'string', description: 'Status of the script invocation.' },
  WorkerSubrequest: { type: 'bool', description: 'Whether the request is a script subrequest.' },
  WorkerSubrequestCount: { type: 'int', description: 'Number of subrequests the script made.' },
  WorkerWallTimeUs: { type: 'int', description: 'Wall-clock time of the script, in microseconds.' },
  ZoneName: { type: 'string', description: 'Name of the zone.' },
} as const satisfies Record<string, HttpRequestsField>;

export type HttpRequestsFieldName = keyof typeof HTTP_REQUESTS_FIELDS;

/** The real service's de-facto default field set, used when a job lists no `field_names`. */
export const HTTP_REQUESTS_DEFAULT_FIELDS: readonly HttpRequestsFieldName[] = [
  'ClientIP',
  'ClientRequestHost',
  'ClientRequestMethod',
  'ClientRequestURI',
  'EdgeEndTimestamp',
  'EdgeResponseBytes',
  'EdgeResponseStatus',
  'EdgeStartTimestamp',
  'RayID',
];

/** The fields that carry custom fields: a job must list one to log them (docs/edge-and-logs.md). */
export const CUSTOM_FIELD_CARRIERS: readonly HttpRequestsFieldName[] = ['Cookies', 'RequestHeaders', 'ResponseHeaders'];

export function isHttpRequestsField(name: string): name is HttpRequestsFieldName {
  return Object.hasOwn(HTTP_REQUESTS_FIELDS, name);
}
