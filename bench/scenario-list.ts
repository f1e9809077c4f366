// Every scenario, in the order a full run measures them; add a new one here.
import type { Scenario } from './lib/types.js';
import { passthrough } from './scenarios/passthrough.js';
import { resilienceOverhead } from './scenarios/resilience-overhead.js';

export const SCENARIOS: readonly Scenario[] = [resilienceOverhead, passthrough];
