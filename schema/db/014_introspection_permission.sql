-- Introspection by permission (issue 40, decision 036): the coordinate `introspection` names who may introspect in production.

alter table permissions drop constraint if exists permissions_coordinate_check;
alter table permissions add constraint permissions_coordinate_check
  check (coordinate ~ '^([_A-Za-z][_0-9A-Za-z]*\.[_A-Za-z][_0-9A-Za-z]*|operation:[_A-Za-z][_0-9A-Za-z]*|introspection)$');
