-- Authorization rules: a principal may read a schema coordinate (Type.field) or run an operation (operation:Name).

create table if not exists permissions (
  -- sub:<subject>, scope:<scope>, client:<client id>, role:<role>, or the words authenticated / anonymous.
  principal text not null check (principal ~ '^((sub|scope|client|role):.+|authenticated|anonymous)$'),
  -- Type.field, or operation:<OperationName>.
  coordinate text not null check (coordinate ~ '^([_A-Za-z][_0-9A-Za-z]*\.[_A-Za-z][_0-9A-Za-z]*|operation:[_A-Za-z][_0-9A-Za-z]*)$'),
  created_at timestamptz not null default now(),
  primary key (coordinate, principal)
);

drop trigger if exists permissions_changed on permissions;
create trigger permissions_changed after insert or update or delete or truncate on permissions
  for each statement execute function switchyard_bump_change('permissions');

insert into registry_changes (topic) values ('permissions') on conflict do nothing;
