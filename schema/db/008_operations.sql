-- The operation registry: every distinct (document, client) the routers executed, with daily counts.
-- Written in batches off the request path by src/registry/operation-log.ts; read by `switchyard operations list`
-- and by `switchyard subgraph check`, which validates what clients really send against a candidate schema.

create table if not exists operations (
  -- SHA-256 (hex) of `normalised`.
  hash text not null,
  -- graphql-js print(parse(document)): whitespace, commas and comments do not make a new document.
  normalised text not null,
  -- The executed operation's name and type (query, mutation, subscription); null name when anonymous.
  operation_name text,
  operation_type text not null,
  -- The token's client claim, else the graphql-client-name / apollographql-client-name header; '' when unknown.
  client_name text not null default '',
  client_version text not null default '',
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  primary key (hash, client_name, client_version)
);

-- `operations list --since` and `subgraph check` read the operations seen in a window.
create index if not exists operations_last_seen on operations (last_seen);

-- Executions per operation, client and UTC day.
create table if not exists operation_counts (
  hash text not null,
  client_name text not null default '',
  client_version text not null default '',
  day date not null,
  count bigint not null check (count >= 0),
  primary key (hash, client_name, client_version, day)
);

create index if not exists operation_counts_day on operation_counts (day);

-- A forced publish writes why it was forced: the operations it breaks (see `subgraph publish --force`).
alter table audit_log add column if not exists detail jsonb;

-- Trusted documents: manifests published by client teams (`switchyard operations publish`), read live by every router.
create table if not exists trusted_documents (
  -- The manifest's id (Apollo: the body's SHA-256; Relay: whatever the compiler chose). One document per id.
  id text primary key,
  document text not null,
  -- SHA-256 (hex) of `document`, so an APQ hash finds a document registered under another id.
  sha256 text not null,
  operation_name text,
  client_name text not null,
  client_version text not null default '',
  created_at timestamptz not null default now()
);

create index if not exists trusted_documents_sha256 on trusted_documents (sha256);

drop trigger if exists trusted_documents_changed on trusted_documents;
create trigger trusted_documents_changed after insert or update or delete or truncate on trusted_documents
  for each statement execute function switchyard_bump_change('trusted_documents');

insert into registry_changes (topic) values ('trusted_documents') on conflict do nothing;
