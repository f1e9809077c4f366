// The `policies` section: each operation's limits (`*`: the default of every other operation), as `policy set` sets them, but whole.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { listPolicies, operationNameProblem, POLICY_LIMITS, policyLimitProblem, removePolicy, setPolicy, type PolicyLimits } from '../policy-store.js';
import type { ConfigSectionDescriptor } from './section.js';
import { checked, keyedBy, keyRule, mapValues, present, sortedEntries } from './section-schema.js';

/** By operation name (`*`: the default of every other operation). */
export type PoliciesSection = Record<string, PolicyLimits>;

const policySchema = z.object(Object.fromEntries(POLICY_LIMITS.map((key) => [key, checked<number | null>((value) => policyLimitProblem(key, value)).optional()]))).strict();

/** Every limit, null where the file sets none: a policy is written whole, so a limit the file leaves out is cleared. */
function wholePolicy(limits: PolicyLimits): { [K in keyof PolicyLimits]: number | null } {
  return Object.fromEntries(POLICY_LIMITS.map((key) => [key, limits[key] ?? null])) as { [K in keyof PolicyLimits]: number | null };
}

export const policiesSection: ConfigSectionDescriptor<PoliciesSection, 'policies'> = {
  name: 'policies',
  noun: 'policy',
  schema: keyedBy(policySchema, keyRule(operationNameProblem)).transform((policies) => mapValues(policies, (limits) => present(limits) as PolicyLimits)),

  async export(db) {
    return sortedEntries((await listPolicies(db)).map(({ operationName, updatedAt: _updatedAt, ...limits }) => [operationName, limits]));
  },

  items: (policies) => Object.entries(policies).map(([name, limits]) => ({ ref: [name], fields: { ...limits } })),

  async apply(tx, changes, desired) {
    for (const { action, ref } of changes) {
      const name = ref[0];
      switch (action) {
        case 'add':
        case 'change':
          await setPolicy(tx, name, wholePolicy(desired[name]));
          break;
        case 'remove':
          await removePolicy(tx, name);
          break;
        default:
          assertNever(action, 'change action');
      }
    }
  },
};
