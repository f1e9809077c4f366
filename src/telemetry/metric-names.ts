// Names of every metric Switchyard exports, in one place (prefix `switchyard_`), so dashboards and docs agree.
export const METRIC = {
  requests: 'switchyard_requests_total',
  requestDuration: 'switchyard_request_duration_seconds',
  streamPayloads: 'switchyard_stream_payloads',
  firstPayloadDuration: 'switchyard_first_payload_seconds',
  lastPayloadDuration: 'switchyard_last_payload_seconds',
  subgraphRequests: 'switchyard_subgraph_requests_total',
  subgraphDuration: 'switchyard_subgraph_request_duration_seconds',
  circuitState: 'switchyard_circuit_state',
  retries: 'switchyard_subgraph_retries_total',
  hedges: 'switchyard_subgraph_hedges_total',
  hedgesBusy: 'switchyard_subgraph_hedges_busy_total',
  deduplicated: 'switchyard_subgraph_deduplicated_total',
  staleSections: 'switchyard_subgraph_stale_total',
  partialResponses: 'switchyard_partial_responses_total',
  missingSections: 'switchyard_missing_sections_total',
  queueInflight: 'switchyard_queue_inflight',
  queueWaiting: 'switchyard_queue_waiting',
  queueRejected: 'switchyard_queue_rejected_total',
  queueWait: 'switchyard_queue_wait_seconds',
  operationCost: 'switchyard_operation_cost',
  costRejected: 'switchyard_cost_rejected_total',
  rateLimited: 'switchyard_rate_limited_total',
  rateLimitFallbacks: 'switchyard_rate_limit_fallbacks_total',
  authFailures: 'switchyard_auth_failures_total',
  forbidden: 'switchyard_authorization_denials_total',
  subgraphTokens: 'switchyard_subgraph_tokens_total',
  tokenCacheRequests: 'switchyard_token_cache_requests_total',
  cacheRequests: 'switchyard_cache_requests_total',
  cacheBytes: 'switchyard_cache_bytes',
  cacheErrors: 'switchyard_cache_errors_total',
  auditBuffered: 'switchyard_audit_buffered',
  auditSpilled: 'switchyard_audit_spilled_total',
  operationsRecorded: 'switchyard_operations_recorded_total',
  operationsUnrecorded: 'switchyard_operations_unrecorded_total',
  trustedDocumentRefusals: 'switchyard_trusted_document_refusals_total',
  executions: 'switchyard_executions_total',
  plans: 'switchyard_plans_total',
  projectionMismatches: 'switchyard_projection_mismatches_total',
  schemaVersion: 'switchyard_schema_version',
  schemaReloads: 'switchyard_schema_reloads_total',
  schemaLastReload: 'switchyard_schema_last_reload_timestamp_seconds',
} as const;

/** Operation label value for unnamed operations and for names past the cardinality cap. */
export const OTHER_OPERATION = '(other)';
export const ANONYMOUS_OPERATION = '(anonymous)';

/** Client label value for a request whose client did not say who it is, and for names past the cardinality cap. */
export const UNKNOWN_CLIENT = '(unknown)';
export const OTHER_CLIENT = '(other)';
