// Scenario: what the operation queue costs when it never makes anyone wait (issue 5: under 3%).
import { fastDemoBackend, productPageRequest } from '../backends/demo-subgraphs.js';
import { switchyardRegistryVariant } from '../gateways/switchyard.js';
import type { Scenario } from '../lib/types.js';

/** Both: registry mode on their own embedded database, auth off, no audit (only the queue differs). */
const COMMON_ENV = { SWITCHYARD_AUTH_MODE: 'off', SWITCHYARD_AUDIT: 'false' };

export const queueNone = switchyardRegistryVariant({
  name: 'queue-none',
  description: 'registry mode, no policy: no operation queue',
  env: COMMON_ENV,
});

/** A queue on every operation, wide enough that 50 connections never wait: the admission path only. */
export const queueWide = switchyardRegistryVariant({
  name: 'queue-wide',
  description: "registry mode, policy '*' --max-concurrency 10000 --queue-length 10000 (admits at once, never waits)",
  env: COMMON_ENV,
  policies: [['*', '--max-concurrency', '10000', '--queue-length', '10000']],
});

export const queueOverhead: Scenario = {
  name: 'queue-overhead',
  summary: 'demo product page (3 subgraphs), registry mode: an operation queue that never waits vs none',
  backend: fastDemoBackend,
  variants: [queueNone, queueWide],
  request: productPageRequest,
  target: { variant: queueWide.name, minRatio: 0.97, statement: 'a queue that admits at once costs under 3% of throughput' },
};
