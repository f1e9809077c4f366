// The fleet drill's figures as text: what failed, what was lost, how long each recovery took.
import type { FleetDrillResult } from './fleet-drill.js';

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function formatFleetDrill(result: FleetDrillResult): string {
  const { load, redis, postgres, audit } = result;
  const [a, b] = result.routers;
  const [auditA, auditB] = audit.routers;
  const lines = [
    `fleet-faults (${result.runId}): two router processes on PostgreSQL and Redis, ${load.ratePerSecond} requests/s at most over ${load.connections} connections, round robin; ${s(load.durationMs)} of load, ${load.attempts} requests (${load.probes} of them probes)`,
    '',
    'requests (the load)   answered      ok   GraphQL errors   HTTP errors   no answer   refused, sent to the other router',
    ...[a, b].map((r) => `  ${r.name.padEnd(18)} ${String(r.answered).padStart(9)} ${String(r.ok).padStart(7)} ${String(r.graphqlErrors).padStart(16)} ${String(r.httpErrors).padStart(13)} ${String(r.network).padStart(11)} ${String(r.refused).padStart(9)}`),
    `  failed: ${result.inFlightAtKill} in flight on router b when it was killed; ${result.otherFailures.count} others${result.otherFailures.examples.length ? `: ${result.otherFailures.examples.join('; ')}` : ''}`,
    '',
    'audit log             answered   with a row   missing   (missing: answered how long before the kill, at most)',
    `  router a           ${String(auditA.answered).padStart(9)} ${String(auditA.withRow).padStart(12)} ${String(auditA.missing).padStart(9)}`,
    `  router b (killed)  ${String(auditB.answered).padStart(9)} ${String(auditB.withRow).padStart(12)} ${String(auditB.missing).padStart(9)}   ${auditB.missing ? `${auditB.missingOldestBeforeKillMs.toFixed(0)} ms` : '-'}; outside the memory buffer: ${auditB.missingOutsideBuffer}`,
    `  router b at the kill: ${postgres.bufferedBeforeKill} entries buffered and ${postgres.spilledBeforeKill} spilled (its gauges just before); ${audit.spilledAtKill} rows in its spill files, ${audit.spilledReplayed} of them in the table after its restart`,
    `  duplicated rows: ${audit.duplicates}; rows set aside as unreplayable: ${postgres.rejectedLines}; unanswered requests with a row: ${audit.unansweredWithRow}`,
    '',
    `Redis unreachable for ${s(redis.downMs)} (proxy stopped), back with its data:`,
    `  rate limits: ${redis.fallbacksDuringOutage} draws fell back to a router's own bucket during the outage; the last one ${s(redis.rateLimitsSharedAfterMs)} after Redis returned; then one budget of 40 over both routers: ${redis.sharedBudgetRefusals[0]} + ${redis.sharedBudgetRefusals[1]} refusals on a + b`,
    `  section cache: a part fetched by router a served by router b from Redis ${s(redis.cacheSharedAfterMs)} after Redis returned (a probe every ~1.3 s)`,
    `  purge during the outage: ${redis.staleAnswers} of ${redis.purgeChecks} answers after Redis returned showed the reviews from before it`,
    '',
    `PostgreSQL restarted: ${postgres.terminated} backends ended, connections refused for ${s(postgres.downMs)}; router b SIGKILLed ${s(result.timings.killAfterMs)} into it`,
    `  router b back in ${s(postgres.restartMs)} (process start to listening), same port and data folder`,
    `  audit spill replayed ${s(postgres.spillReplayedAfterMs[0])} (router a) and ${s(postgres.spillReplayedAfterMs[1])} (router b) after PostgreSQL returned`,
    '',
    `publish of a new subgraph after the restart: served by both routers ${s(result.publishServedAfterMs)} after it`,
    '',
    'timeline',
    ...result.timeline.map((event) => `  ${(event.atMs / 1000).toFixed(1).padStart(6)} s  ${event.event}`),
  ];
  return lines.join('\n');
}

export interface FleetVerdict {
  claim: string;
  holds: boolean;
}

/** The issue's claims, each checked against a drill's figures (the CI test asserts the same ones). */
export function fleetVerdicts(result: FleetDrillResult): FleetVerdict[] {
  const [auditA, auditB] = result.audit.routers;
  const { redis, audit } = result;
  return [
    { claim: 'no load request failed but those in flight on the killed router', holds: result.otherFailures.count === 0 },
    { claim: 'no audit row of the surviving router lost', holds: auditA.missing === 0 },
    { claim: 'of the killed router, only rows still in its memory buffer lost', holds: auditB.missingOutsideBuffer === 0 },
    { claim: "the killed router's spill file replayed on restart, without duplicates", holds: audit.spilledAtKill > 0 && audit.spilledReplayed === audit.spilledAtKill && audit.duplicates === 0 },
    { claim: 'rate limits shared again within 10 s of Redis returning', holds: redis.rateLimitsSharedAfterMs < 10_000 && redis.sharedBudgetRefusals.every((n) => n > 0) },
    { claim: 'section cache shared again within 15 s of Redis returning', holds: redis.cacheSharedAfterMs < 15_000 },
    { claim: 'no part purged during the Redis outage served afterwards', holds: redis.staleAnswers === 0 },
    { claim: 'a publish after the PostgreSQL restart served by both routers within 5 s', holds: result.publishServedAfterMs < 5_000 },
  ];
}
