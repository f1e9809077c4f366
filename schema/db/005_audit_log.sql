-- The audit log: one row per request, written in batches off the request path by src/registry/audit-log.ts.

create table if not exists audit_log (
  id bigserial primary key,
  -- When the request arrived (not when the row was written: rows can be written late, after an outage).
  at timestamptz not null,
  request_id text not null,
  trace_id text,
  client text,
  subject text,
  operation_name text,
  -- Hash of the GraphQL document.
  operation_hash text,
  -- Subgraphs the request called.
  subgraphs text[] not null default '{}',
  -- HTTP status of the response.
  status integer not null,
  duration_ms double precision not null,
  error_codes text[] not null default '{}',
  complete boolean not null,
  -- Idempotency key assigned by the writer (its random id, then its sequence number): a batch that may
  -- have been written just before a failure is replayed later without duplicating rows. Not request_id:
  -- clients may send their own request ids, and a reused one must neither hide an entry nor collide.
  writer_id uuid not null,
  writer_seq bigint not null,
  constraint audit_log_entry_key unique (writer_id, writer_seq)
);

create index if not exists audit_log_at on audit_log (at);
-- Serves `switchyard audit --operation X`, newest first.
create index if not exists audit_log_operation_name on audit_log (operation_name, at);
