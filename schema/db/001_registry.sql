-- The subgraph registry and the change versions that tell routers to reload.

create table if not exists subgraphs (
  name text primary key check (name ~ '^[A-Za-z][A-Za-z0-9_-]{0,62}$'),
  url text not null,
  sdl text not null,
  -- Route metadata (timeouts, breaker thresholds, header rules, ...): read through one accessor in src/registry.
  route jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- One row per topic ('subgraphs', later 'policies', 'permissions'): a version bumped by a trigger on every
-- change. Routers re-read a topic when its version moves, whether they heard NOTIFY or polled.
create table if not exists registry_changes (
  topic text primary key,
  version bigint not null default 0,
  changed_at timestamptz not null default now()
);

create or replace function switchyard_bump_change() returns trigger language plpgsql as $$
begin
  insert into registry_changes (topic, version, changed_at) values (tg_argv[0], 1, now())
    on conflict (topic) do update set version = registry_changes.version + 1, changed_at = now();
  perform pg_notify('switchyard_changes', tg_argv[0]);
  return null;
end
$$;

drop trigger if exists subgraphs_changed on subgraphs;
create trigger subgraphs_changed after insert or update or delete or truncate on subgraphs
  for each statement execute function switchyard_bump_change('subgraphs');

insert into registry_changes (topic) values ('subgraphs') on conflict do nothing;
