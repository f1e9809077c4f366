// The `cacheRules` section: by coordinate (`Type` or `Type.field`), the max age, scope and stale window `cache set` sets, each rule whole.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { cacheRuleProblems, listCacheRules, removeCacheRule, setCacheRule, type CacheScope } from '../cache-store.js';
import type { ConfigSectionDescriptor } from './section.js';
import { checked, keyedBy, keyRule, mapValues, present, sortedEntries } from './section-schema.js';

/** One cache rule: as `cache set`, without the clearing `none` (an absent key is not set). */
export interface CacheRuleConfig {
  maxAgeSeconds: number;
  scope?: CacheScope;
  staleSeconds?: number;
}

/** By coordinate (`Type` or `Type.field`). */
export type CacheRulesSection = Record<string, CacheRuleConfig>;

const cacheRuleSchema = z
  .object({
    maxAgeSeconds: checked<number>(cacheRuleProblems.maxAgeSeconds),
    scope: checked<CacheScope | null>(cacheRuleProblems.scope).optional(),
    staleSeconds: checked<number | null>(cacheRuleProblems.staleSeconds).optional(),
  })
  .strict();

export const cacheRulesSection: ConfigSectionDescriptor<CacheRulesSection, 'cacheRules'> = {
  name: 'cacheRules',
  noun: 'cache rule',
  schema: keyedBy(cacheRuleSchema, keyRule(cacheRuleProblems.coordinate)).transform((rules) => mapValues(rules, (rule) => present(rule) as CacheRuleConfig)),

  async export(db) {
    return sortedEntries((await listCacheRules(db)).map(({ coordinate, updatedAt: _updatedAt, ...rule }) => [coordinate, rule]));
  },

  items: (rules) => Object.entries(rules).map(([coordinate, rule]) => ({ ref: [coordinate], fields: { ...rule } })),

  async apply(tx, changes, desired) {
    for (const { action, ref } of changes) {
      const coordinate = ref[0];
      switch (action) {
        case 'add':
        case 'change': {
          const { maxAgeSeconds, scope, staleSeconds } = desired[coordinate];
          await setCacheRule(tx, { coordinate, maxAgeSeconds, scope: scope ?? null, staleSeconds: staleSeconds ?? null });
          break;
        }
        case 'remove':
          await removeCacheRule(tx, coordinate);
          break;
        default:
          assertNever(action, 'change action');
      }
    }
  },
};
