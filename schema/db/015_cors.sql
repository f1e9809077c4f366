-- The CORS allow-list (decision 037): which browser origins may call the router cross-origin, and how; read live by every router.
-- The origin language (exact origins and patterns) is checked by the store (src/config/cors-origins.ts); the table holds what it allowed.

create table if not exists cors_origins (
  -- An exact origin as browsers send it (https://app.example.com), a pattern (https://*.example.com, http://localhost:*), or *.
  origin text primary key check (origin = '*' or origin ~ '^https?://[^/?#@ ]+$'),
  -- Methods a preflight allows, uppercase and sorted; null: GET and POST.
  methods text[] check (methods is null or cardinality(methods) between 1 and 6),
  -- Request headers a preflight allows, lowercase and sorted; null: the headers the preflight asks for.
  headers text[] check (headers is null or cardinality(headers) between 1 and 64),
  -- Whether the browser may send cookies and HTTP authentication (Access-Control-Allow-Credentials); never for *.
  credentials boolean not null default false,
  -- How long a browser may keep the preflight's answer, in seconds; null: the browser's default (5 s).
  max_age_seconds integer check (max_age_seconds between 0 and 86400),
  updated_at timestamptz not null default now(),
  constraint cors_origins_no_credentials_for_any check (not (origin = '*' and credentials))
);

drop trigger if exists cors_origins_changed on cors_origins;
create trigger cors_origins_changed after insert or update or delete or truncate on cors_origins
  for each statement execute function switchyard_bump_change('cors');

insert into registry_changes (topic) values ('cors') on conflict do nothing;
