// The `cors` section: by origin or pattern, the methods, headers, credentials and max age `cors set` sets, each rule whole.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { corsRuleProblems, listCorsRules, normalizedList, removeCorsRule, setCorsRule } from '../cors-store.js';
import type { ConfigSectionDescriptor } from './section.js';
import { checked, isPlainObject, keyedBy, mapValues, sortedEntries } from './section-schema.js';

/** One rule: as `cors set`; an absent key is its default (GET and POST; the headers a preflight asks for; no credentials; no max age). */
export interface CorsRuleConfig {
  methods?: string[];
  headers?: string[];
  /** Written only when true. */
  credentials?: boolean;
  maxAgeSeconds?: number;
}

/** By origin or pattern (`https://app.example.com`, `https://*.example.com`, `*`). */
export type CorsSection = Record<string, CorsRuleConfig>;

const corsRuleSchema = z
  .object({
    methods: checked<string[] | null>(corsRuleProblems.methods).optional(),
    headers: checked<string[] | null>(corsRuleProblems.headers).optional(),
    credentials: checked<boolean | null>(corsRuleProblems.credentials).optional(),
    maxAgeSeconds: checked<number | null>(corsRuleProblems.maxAgeSeconds).optional(),
  })
  .strict();

/** The one form export writes: lists cased and sorted, credentials only when true, nulls dropped. */
function normalized(rule: z.output<typeof corsRuleSchema>): CorsRuleConfig {
  const methods = normalizedList(rule.methods, 'methods');
  const headers = normalizedList(rule.headers, 'headers');
  return {
    ...(methods ? { methods } : {}),
    ...(headers ? { headers } : {}),
    ...(rule.credentials ? { credentials: true } : {}),
    ...(rule.maxAgeSeconds !== null && rule.maxAgeSeconds !== undefined ? { maxAgeSeconds: rule.maxAgeSeconds } : {}),
  };
}

export const corsSection: ConfigSectionDescriptor<CorsSection, 'cors'> = {
  name: 'cors',
  noun: 'CORS origin',
  schema: keyedBy(corsRuleSchema, (origin, entry) => {
    const message = corsRuleProblems.origin(origin);
    if (message) return { message };
    const rule = corsRuleProblems.rule(origin, isPlainObject(entry) ? entry.credentials : undefined);
    return rule ? { path: ['credentials'], message: rule } : undefined;
  }).transform((rules) => mapValues(rules, normalized)),

  async export(db) {
    return sortedEntries((await listCorsRules(db)).map(({ origin, updatedAt: _updatedAt, ...rule }) => [origin, normalized(rule)]));
  },

  items: (rules) => Object.entries(rules).map(([origin, rule]) => ({ ref: [origin], fields: { ...rule } })),

  async apply(tx, changes, desired) {
    for (const { action, ref } of changes) {
      const origin = ref[0];
      switch (action) {
        case 'add':
        case 'change':
          await setCorsRule(tx, { origin, ...desired[origin] });
          break;
        case 'remove':
          await removeCorsRule(tx, origin);
          break;
        default:
          assertNever(action, 'change action');
      }
    }
  },
};
