/** A log job as the API answers it (GET .../logshipping/jobs). */
export interface Job {
  id: number;
  name: string | null;
  dataset: string;
  destination_conf: string;
  enabled: boolean;
  last_complete: string | null;
  last_error: string | null;
  error_message: string | null;
  filter: string | null;
  output_options: {
    field_names: string[];
    timestamp_format: string;
    sample_rate: number;
    output_type: string;
  };
}

/** A field of the dataset as the server serves it (GET .../datasets/http_requests/catalog). */
export interface CatalogField {
  name: string;
  type: string;
  description: string;
  deprecated: boolean;
  /** Whether the edge fills it: a field it never fills is null in every line. */
  filled: boolean;
}

export interface DatasetCatalog {
  fields: CatalogField[];
  /** How many log jobs a zone may have: creating one more is refused (403 / 1004). */
  max_jobs_per_zone: number;
  /** The directories file:// destinations may point below (the server's `[logs] file_roots`); empty when file:// is off. */
  file_roots: string[];
}

export function catalogPath(zoneId: string): string {
  return `/zones/${encodeURIComponent(zoneId)}/logshipping/datasets/http_requests/catalog`;
}
