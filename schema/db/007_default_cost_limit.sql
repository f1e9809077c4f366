-- Secure by default: the `*` policy refuses documents whose estimated cost exceeds 50000 (COST_LIMIT_EXCEEDED, before any subgraph call).
-- 50000 is about twice the dearest workload we know (the federation benchmark's heavy query, 24420) and 38 times a page of
-- 50 demo products with reviews and inventory (1300); `products(first: 1000000) { reviews { product { reviews { body } } } }` is 441 million.
-- Ops raise it with `switchyard policy set '*' --cost-limit N` and clear it with `--cost-limit none`; keep in step with
-- DEFAULT_COST_LIMIT in src/registry/policy-store.ts (routers serving a supergraph file, without a registry, use that).
-- A `*` row that exists without a cost limit gets it too: before this migration no default existed, so none was chosen.
insert into policies (operation_name, cost_limit) values ('*', 50000)
  on conflict (operation_name) do update set cost_limit = 50000 where policies.cost_limit is null;
