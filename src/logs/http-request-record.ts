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

/**
 * The dataset's fields a record carries, as a table the compiler proves complete (every field of
 * HttpRequestRecord, nothing else): the fields edgeport fills. The fields route and the dashboard's
 * field picker read it; any other field of the dataset is null in every line.
 */
const FILLED: Record<RecordFieldName, true> = {
  RayID: true,
  ZoneName: true,
  EdgeStartTimestamp: true,
  EdgeEndTimestamp: true,
  ClientIP: true,
  ClientRequestHost: true,
  ClientRequestMethod: true,
  ClientRequestURI: true,
  ClientRequestPath: true,
  ClientRequestProtocol: true,
  ClientRequestScheme: true,
  ClientRequestUserAgent: true,
  ClientRequestReferer: true,
  ClientRequestBytes: true,
  EdgeResponseStatus: true,
  EdgeResponseBytes: true,
  EdgeResponseContentType: true,
  OriginResponseStatus: true,
  OriginResponseTime: true,
  WorkerSubrequest: true,
  RequestHeaders: true,
  ResponseHeaders: true,
  Cookies: true,
};

/** Whether the edge fills this field of `http_requests` (else it is null in every line). */
export function isFilledField(name: string): name is RecordFieldName {
  return Object.hasOwn(FILLED, name);
}
