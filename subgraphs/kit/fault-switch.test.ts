// Unit tests of the fault switch: defaults, partial changes, validation, environment variables.
import { describe, expect, it } from 'vitest';
import { createFaultSwitch, DEFAULT_FAULT_SETTINGS, FaultSettingsError, faultSettingsFromEnv, validateFaultPatch } from './fault-switch.js';

describe('fault switch', () => {
  it('starts from the defaults and changes only the given knobs', () => {
    const faults = createFaultSwitch();
    expect(faults.get()).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 0, jitterMs: 0, errorRate: 0, mode: 'ok' });
    expect(faults.set({ latencyMs: 80 })).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 80 });
    expect(faults.set({ mode: 'hang', errorRate: 0.5 })).toEqual({ ...DEFAULT_FAULT_SETTINGS, latencyMs: 80, jitterMs: 0, errorRate: 0.5, mode: 'hang' });
  });

  it('rejects bad input as a whole, lists every problem and changes nothing', () => {
    const faults = createFaultSwitch({ latencyMs: 10 });
    const before = faults.get();
    let caught: unknown;
    try {
      faults.set({ latencyMs: -1, errorRate: 2, mode: 'broken', jitterMs: 5, extra: true } as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FaultSettingsError);
    expect((caught as FaultSettingsError).code).toBe('INVALID_FAULT_SETTINGS');
    expect((caught as FaultSettingsError).problems).toHaveLength(4);
    expect(faults.get()).toBe(before);
  });

  it.each([null, [], 'ok', 3])('rejects a patch that is not an object: %j', (input) => {
    expect(() => validateFaultPatch(input)).toThrow(FaultSettingsError);
  });

  it.each([
    { latencyMs: Number.NaN },
    { latencyMs: Infinity },
    { latencyMs: '80' },
    { jitterMs: 600_001 },
    { errorRate: -0.1 },
    { mode: 'OK' },
  ])('rejects %j', (input) => {
    expect(() => validateFaultPatch(input)).toThrow(FaultSettingsError);
  });

  it('tells change listeners about each successful change until they are removed', () => {
    const faults = createFaultSwitch();
    const seen: string[] = [];
    const remove = faults.onChange((settings) => seen.push(settings.mode));
    faults.set({ mode: 'down' });
    expect(() => faults.set({ mode: 'sleep' as never })).toThrow(FaultSettingsError);
    remove();
    faults.set({ mode: 'ok' });
    expect(seen).toEqual(['down']);
  });

  it('hands out frozen settings', () => {
    expect(Object.isFrozen(createFaultSwitch().get())).toBe(true);
  });
});

describe('fault settings from the environment', () => {
  it('reads every knob and skips unset or empty variables', () => {
    expect(faultSettingsFromEnv({ FAULT_LATENCY_MS: '80', FAULT_JITTER_MS: ' 20 ', FAULT_ERROR_RATE: '0.25', FAULT_MODE: 'error' })).toEqual({
      latencyMs: 80,
      jitterMs: 20,
      errorRate: 0.25,
      mode: 'error',
    });
    expect(faultSettingsFromEnv({ FAULT_LATENCY_MS: '', PATH: '/bin' })).toEqual({});
  });

  it('names the variable in the error for a bad value', () => {
    expect(() => faultSettingsFromEnv({ FAULT_LATENCY_MS: 'fast' })).toThrow(/FAULT_LATENCY_MS must be a number of milliseconds/);
    expect(() => faultSettingsFromEnv({ FAULT_ERROR_RATE: '1.5' })).toThrow(/FAULT_ERROR_RATE must be a number from 0 to 1 \(got "1.5"\)/);
    expect(() => faultSettingsFromEnv({ FAULT_MODE: 'sleepy' })).toThrow(/FAULT_MODE must be one of ok, error, down, hang/);
  });
});
