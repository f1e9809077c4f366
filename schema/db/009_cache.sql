-- Section cache rules (max age and scope per type or field, overriding @cacheControl in subgraph SDL) and purges: read live by every router.

create table if not exists cache_rules (
  -- A type (every field returning it, and its entities) or one field: Type or Type.field.
  coordinate text primary key check (coordinate ~ '^[_A-Za-z][_0-9A-Za-z]*(\.[_A-Za-z][_0-9A-Za-z]*)?$'),
  -- How long an answer may be served from the cache, in seconds; 0 means never cached.
  max_age_seconds integer not null check (max_age_seconds >= 0),
  -- Who may share an entry; null: the rule does not say (the SDL hint, else the router's default, decides).
  scope text check (scope in ('public', 'private')),
  -- How long past its max age an entry is kept as the fallback while its subgraph fails, in seconds; null: the router default (300).
  stale_seconds integer check (stale_seconds >= 0),
  updated_at timestamptz not null default now()
);

drop trigger if exists cache_rules_changed on cache_rules;
create trigger cache_rules_changed after insert or update or delete or truncate on cache_rules
  for each statement execute function switchyard_bump_change('cache_rules');

insert into registry_changes (topic) values ('cache_rules') on conflict do nothing;

-- Purges, append-only: each router drops the matching entries and remembers the last seq it applied.
-- Writers take an advisory lock before drawing a seq (src/registry/cache-store.ts), so seqs become
-- visible in order and a router reading "after seq N" never skips a purge that committed late.
create table if not exists cache_purges (
  seq bigserial primary key,
  -- Entries of this type (entities and fields returning it); null: any type.
  type_name text check (type_name ~ '^[_A-Za-z][_0-9A-Za-z]*$'),
  -- Only the entity with this key: canonical JSON (keys sorted, scalar leaves as strings), e.g. {"id":"1"}.
  entity_key text,
  -- Only entries fetched from this subgraph; null: any subgraph.
  subgraph text check (subgraph ~ '^[A-Za-z][A-Za-z0-9_-]{0,62}$'),
  -- Everything (then nothing else is named).
  purge_all boolean not null default false,
  purged_at timestamptz not null default now(),
  constraint cache_purges_names_something check (purge_all or type_name is not null or subgraph is not null),
  constraint cache_purges_key_needs_type check (entity_key is null or type_name is not null),
  constraint cache_purges_all_alone check (not purge_all or (type_name is null and entity_key is null and subgraph is null))
);

-- Routers read only recent purges; trimming deletes old ones.
create index if not exists cache_purges_purged_at on cache_purges (purged_at);

-- Inserts only: trimming old purges changes nothing a router must do, so it wakes no router.
drop trigger if exists cache_purges_changed on cache_purges;
create trigger cache_purges_changed after insert on cache_purges
  for each statement execute function switchyard_bump_change('cache_purges');

insert into registry_changes (topic) values ('cache_purges') on conflict do nothing;
