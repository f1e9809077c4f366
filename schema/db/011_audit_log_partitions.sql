-- The audit log, partitioned by UTC day of `at` (decision 030): retention drops whole days (src/registry/audit-partitions.ts).
-- Moves the existing log over without losing a row: the old table is renamed, the partitioned one created
-- under the old names, every row copied (ids kept) into a partition of its own day, and the old table dropped.

alter table audit_log rename to audit_log_unpartitioned;
alter table audit_log_unpartitioned rename constraint audit_log_pkey to audit_log_unpartitioned_pkey;
alter table audit_log_unpartitioned rename constraint audit_log_entry_key to audit_log_unpartitioned_entry_key;
alter index if exists audit_log_at rename to audit_log_unpartitioned_at;
alter index if exists audit_log_operation_name rename to audit_log_unpartitioned_operation_name;

create table audit_log (
  -- From the old table's sequence, so ids go on from where they were. Display and ordering only: the key is below.
  id bigint not null default nextval('audit_log_id_seq'),
  -- When the request arrived (not when the row was written: rows can be written late, after an outage). The partition key.
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
  -- Idempotency key assigned by the writer (its random id, then its sequence number), so a batch that may
  -- have been written just before a failure is replayed later without duplicating rows. A unique key of a
  -- partitioned table must hold the partition key, so `at` is part of it: the writer fixes a row's `at`
  -- once, and a replay (from memory or a spill line) carries the same one, so it lands in the same
  -- partition and meets the row it repeats there. Not request_id: clients may send their own.
  writer_id uuid not null,
  writer_seq bigint not null,
  -- Why an administrative action was taken (a forced publish names the operations it breaks); null for requests.
  detail jsonb,
  constraint audit_log_entry_key primary key (writer_id, writer_seq, at)
) partition by range (at);

alter sequence audit_log_id_seq owned by audit_log.id;

create index audit_log_at on audit_log (at);
-- Serves `switchyard audit --operation X`, newest first.
create index audit_log_operation_name on audit_log (operation_name, at);

-- Rows of a day that has no partition (a late replay, a clock far ahead, days before the router first made
-- them) land here rather than fail; the maintenance moves them into their day's partition when it makes
-- it, and deletes those past retention.
create table audit_log_default partition of audit_log default;

-- One partition per day the old log holds, named audit_log_pYYYYMMDD and bounded by UTC midnights, as the
-- maintenance names them. Days past retention are dropped whole by the router's first maintenance.
do $$
declare
  day date;
begin
  for day in select distinct (at at time zone 'UTC')::date from audit_log_unpartitioned order by 1 loop
    execute format('create table %I partition of audit_log for values from (%L) to (%L)',
      'audit_log_p' || to_char(day, 'YYYYMMDD'), to_char(day, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(day + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
  end loop;
end
$$;

insert into audit_log (id, at, request_id, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms,
    error_codes, complete, writer_id, writer_seq, detail)
  select id, at, request_id, trace_id, client, subject, operation_name, operation_hash, subgraphs, status, duration_ms,
    error_codes, complete, writer_id, writer_seq, detail
  from audit_log_unpartitioned;

drop table audit_log_unpartitioned;
