/**
 * One `http_requests` record as the edge produces it: the fields edgeport fills, by their dataset
 * names. Timestamps are epoch milliseconds (formatted per job); custom fields are name -> value
 * maps holding only the configured names that were present.
 */
export interface HttpRequestRecord {
  RayID: string;
  ZoneName: string;
  EdgeStartTimestamp: number;
  EdgeEndTimestamp: number;
  ClientIP: string;
  ClientRequestHost: string;
  ClientRequestMethod: string;
  ClientRequestURI: string;
  ClientRequestPath: string;
  ClientRequestProtocol: string;
  ClientRequestScheme: string;
  ClientRequestUserAgent: string;
  ClientRequestReferer: string;
  /** Bytes of the request as received: request line, headers and body. */
  ClientRequestBytes: number;
  EdgeResponseStatus: number;
  /** Bytes of the response body sent to the client. */
  EdgeResponseBytes: number;
  EdgeResponseContentType: string;
  /** 0 when no origin answered (unknown host, origin down, script). */
  OriginResponseStatus: number;
  /** Time to the origin's response headers, in ms; 0 without an origin. */
  OriginResponseTime: number;
  WorkerSubrequest: boolean;
  RequestHeaders: Record<string, string>;
  ResponseHeaders: Record<string, string>;
  Cookies: Record<string, string>;
}

export type RecordFieldName = keyof HttpRequestRecord;
