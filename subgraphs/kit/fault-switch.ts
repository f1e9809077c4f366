// The fault switch of a demo subgraph: latency, jitter, error rate and mode, validated and swapped atomically.

/**
 * - `ok`: answer normally (latency and `errorRate` still apply);
 * - `error`: every request answers HTTP 200 with an `INJECTED_FAULT` GraphQL error;
 * - `down`: the connection is destroyed without any HTTP response, like a crashed service;
 * - `hang`: the request is never answered (until the client gives up).
 */
export type FaultMode = 'ok' | 'error' | 'down' | 'hang';

export const FAULT_MODES: readonly FaultMode[] = ['ok', 'error', 'down', 'hang'];

export interface FaultSettings {
  /** Added before every answered `/graphql` request, in milliseconds. Default 0, at most `MAX_DELAY_MS`. */
  readonly latencyMs: number;
  /** A uniform random 0..jitterMs added to `latencyMs`, in milliseconds. Default 0, at most `MAX_DELAY_MS`. */
  readonly jitterMs: number;
  /** Fraction (0..1) of `/graphql` requests that fail as `errorStatus` says. Default 0. */
  readonly errorRate: number;
  /**
   * How an injected failure answers: 200 (default) with an `INJECTED_FAULT` GraphQL error, or one of
   * 500, 502, 503, 504 with a plain-text body (no GraphQL response), like a proxy in front of a failing service.
   */
  readonly errorStatus: number;
  /** Fraction (0..1) of answered `/graphql` requests that wait `slowMs` more: a tail-latency knob. Default 0. */
  readonly slowRate: number;
  /** Extra delay of a slow request, in milliseconds. Default 0, at most `MAX_DELAY_MS`. */
  readonly slowMs: number;
  /** Default `ok`. */
  readonly mode: FaultMode;
}

/** Ten minutes: longer delays are what `hang` is for, and it keeps timers far below setTimeout's 2^31-1 limit. */
export const MAX_DELAY_MS = 600_000;

export const DEFAULT_FAULT_SETTINGS: FaultSettings = Object.freeze({ latencyMs: 0, jitterMs: 0, errorRate: 0, errorStatus: 200, slowRate: 0, slowMs: 0, mode: 'ok' });

/** Statuses an injected failure may answer with. */
export const ERROR_STATUSES: readonly number[] = [200, 500, 502, 503, 504];

/** The environment variable that sets each knob at start. */
export const FAULT_ENV_VARS: Readonly<Record<keyof FaultSettings, string>> = Object.freeze({
  latencyMs: 'FAULT_LATENCY_MS',
  jitterMs: 'FAULT_JITTER_MS',
  errorRate: 'FAULT_ERROR_RATE',
  errorStatus: 'FAULT_ERROR_STATUS',
  slowRate: 'FAULT_SLOW_RATE',
  slowMs: 'FAULT_SLOW_MS',
  mode: 'FAULT_MODE',
});

/** Bad fault settings: `problems` lists every one of them, so a caller can fix all at once. */
export class FaultSettingsError extends Error {
  readonly code = 'INVALID_FAULT_SETTINGS';
  constructor(readonly problems: readonly string[]) {
    super(`invalid fault settings: ${problems.join('; ')}`);
    this.name = 'FaultSettingsError';
  }
}

export interface FaultSwitch {
  /** The current settings (a frozen object: safe to keep, never changes under you). */
  get(): FaultSettings;
  /** Changes only the given knobs and answers the full new state; throws `FaultSettingsError` and changes nothing on bad input. */
  set(patch: Partial<FaultSettings>): FaultSettings;
  /**
   * Calls `listener` with the new settings after each successful `set()` (how a server cuts its open streams
   * when the mode turns `down`). Returns the function that removes it; whoever adds a listener removes it.
   */
  onChange(listener: (settings: FaultSettings) => void): () => void;
}

const KNOBS = Object.keys(FAULT_ENV_VARS) as (keyof FaultSettings)[];

function isDelay(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_DELAY_MS;
}

function isRate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

function isMode(value: unknown): value is FaultMode {
  return typeof value === 'string' && (FAULT_MODES as readonly string[]).includes(value);
}

/** What each knob must be, worded for error messages. */
const EXPECTED: Readonly<Record<keyof FaultSettings, string>> = {
  latencyMs: `a number of milliseconds from 0 to ${MAX_DELAY_MS}`,
  jitterMs: `a number of milliseconds from 0 to ${MAX_DELAY_MS}`,
  errorRate: 'a number from 0 to 1',
  errorStatus: `one of ${ERROR_STATUSES.join(', ')}`,
  slowRate: 'a number from 0 to 1',
  slowMs: `a number of milliseconds from 0 to ${MAX_DELAY_MS}`,
  mode: `one of ${FAULT_MODES.join(', ')}`,
};

const CHECKS: Readonly<Record<keyof FaultSettings, (value: unknown) => boolean>> = {
  latencyMs: isDelay,
  jitterMs: isDelay,
  errorRate: isRate,
  errorStatus: (value) => typeof value === 'number' && ERROR_STATUSES.includes(value),
  slowRate: isRate,
  slowMs: isDelay,
  mode: isMode,
};

/**
 * Checks untrusted input (an admin request body, a caller bypassing the types) and returns the
 * patch it describes. Rejects unknown keys, so a typo like `latency` fails loudly instead of doing nothing.
 */
export function validateFaultPatch(input: unknown): Partial<FaultSettings> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new FaultSettingsError([`expected a JSON object with some of ${KNOBS.join(', ')}`]);
  }
  const problems: string[] = [];
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!(KNOBS as string[]).includes(key)) {
      problems.push(`unknown key "${key}" (known: ${KNOBS.join(', ')})`);
    } else if (value !== undefined) {
      const knob = key as keyof FaultSettings;
      if (CHECKS[knob](value)) patch[knob] = value;
      else problems.push(`${knob} must be ${EXPECTED[knob]} (got ${JSON.stringify(value)})`);
    }
  }
  if (problems.length > 0) throw new FaultSettingsError(problems);
  return patch as Partial<FaultSettings>;
}

/**
 * Reads `FAULT_LATENCY_MS`, `FAULT_JITTER_MS`, `FAULT_ERROR_RATE` and `FAULT_MODE`. Unset or empty
 * variables are skipped; a bad value throws `FaultSettingsError` naming the variable.
 */
export function faultSettingsFromEnv(env: NodeJS.ProcessEnv): Partial<FaultSettings> {
  const problems: string[] = [];
  const patch: Record<string, unknown> = {};
  for (const knob of KNOBS) {
    const variable = FAULT_ENV_VARS[knob];
    const raw = env[variable]?.trim();
    if (raw === undefined || raw === '') continue;
    // Number('') and Number(' ') are 0, hence the emptiness check above.
    const value = knob === 'mode' ? raw : Number(raw);
    if (CHECKS[knob](value)) patch[knob] = value;
    else problems.push(`${variable} must be ${EXPECTED[knob]} (got ${JSON.stringify(env[variable])})`);
  }
  if (problems.length > 0) throw new FaultSettingsError(problems);
  return patch as Partial<FaultSettings>;
}

/**
 * A fault switch starting from the defaults overlaid with `initial` (validated). Settings live in
 * one frozen object replaced on each change, so the request path reads them with a single load.
 */
export function createFaultSwitch(initial: Partial<FaultSettings> = {}): FaultSwitch {
  let current: FaultSettings = Object.freeze({ ...DEFAULT_FAULT_SETTINGS, ...validateFaultPatch(initial) });
  const listeners = new Set<(settings: FaultSettings) => void>();
  return {
    get: function getFaults() {
      return current;
    },
    set: function setFaults(patch) {
      current = Object.freeze({ ...current, ...validateFaultPatch(patch) });
      for (const listener of [...listeners]) listener(current);
      return current;
    },
    onChange: function onFaultChange(listener) {
      // Wrapped, so adding the same function twice gives two independent registrations.
      const registered = (settings: FaultSettings): void => listener(settings);
      listeners.add(registered);
      return function removeFaultListener() {
        listeners.delete(registered);
      };
    },
  };
}
