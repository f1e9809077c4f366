// Every scenario, in the order a full run measures them; add a new one here.
import type { Scenario } from './lib/types.js';
import { deferMeasurement } from './measurements/defer.js';
import { fleetFaults } from './measurements/fleet-faults.js';
import { queueMemory, type Measurement } from './measurements/queue-memory.js';
import { soak } from './measurements/soak.js';
import { subscriptionsMeasurement } from './measurements/subscriptions.js';
import { passthrough } from './scenarios/passthrough.js';
import { publishWarmup } from './scenarios/publish-warmup.js';
import { peersHeavy, peersHello, peersProductPage } from './scenarios/peers.js';
import { queueOverhead } from './scenarios/queue-overhead.js';
import { resilienceOverhead } from './scenarios/resilience-overhead.js';
import { sectionCacheHits, sectionCacheMisses } from './scenarios/section-cache.js';
import { securityOverhead } from './scenarios/security-overhead.js';
import { tracingOverhead } from './scenarios/tracing-overhead.js';
import { workersScaling } from './scenarios/workers-scaling.js';

export const SCENARIOS: readonly Scenario[] = [resilienceOverhead, passthrough, securityOverhead, queueOverhead, tracingOverhead, peersHeavy, peersProductPage, peersHello, publishWarmup, sectionCacheHits, sectionCacheMisses, workersScaling];

/** What `--quick` runs when no scenario is named: the comparisons the issues set targets on, in about two minutes. */
export const QUICK_SCENARIOS: readonly string[] = [resilienceOverhead.name, peersHeavy.name, peersProductPage.name, peersHello.name];

/** Measurements that are not (only) paired throughput comparisons of gateway variants; each runs only when named (`--scenario queue-memory`, `--scenario defer`, `--scenario soak`, `--scenario subscriptions`...). */
export const MEASUREMENTS: readonly Measurement[] = [queueMemory, deferMeasurement, fleetFaults, soak, subscriptionsMeasurement];
