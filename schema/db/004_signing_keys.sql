-- Router signing keys, shared by every router instance: the per-subgraph token keys and the dev issuer's keys.

create table if not exists signing_keys (
  -- RFC 7638 JWK thumbprint of the public key: unique, and the same on every instance.
  kid text primary key,
  purpose text not null check (purpose in ('subgraph-token', 'dev-issuer')),
  alg text not null check (alg in ('ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA')),
  -- The private key in plaintext: whoever can read this table can sign as the router.
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  created_at timestamptz not null default now(),
  -- Null: the active signing key of its purpose. Set: retired; still published (and accepted) until then,
  -- so tokens signed just before a rotation stay verifiable for their lifetime.
  not_after timestamptz
);

-- One active key per purpose, whatever the application does: two routers starting at once cannot both create one.
create unique index if not exists signing_keys_one_active on signing_keys (purpose) where not_after is null;

drop trigger if exists signing_keys_changed on signing_keys;
create trigger signing_keys_changed after insert or update or delete or truncate on signing_keys
  for each statement execute function switchyard_bump_change('signing_keys');

insert into registry_changes (topic) values ('signing_keys') on conflict do nothing;
