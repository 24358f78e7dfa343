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
