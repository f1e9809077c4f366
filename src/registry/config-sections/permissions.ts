// The `permissions` section: by coordinate (`Type.field`, `operation:Name` or `introspection`), the principals allowed on it; each grant is one item.
import { z } from 'zod';
import { assertNever } from '../../errors/assert-never.js';
import { grantPermission, listPermissions, permissionCoordinateProblem, principalProblem, revokePermission } from '../permission-store.js';
import { compareText, type ConfigSectionDescriptor } from './section.js';
import { checked, keyedBy, keyRule, mapValues, sortedEntries } from './section-schema.js';

/** By coordinate: the principals allowed on it, sorted. */
export type PermissionsSection = Record<string, string[]>;

const principalsSchema = z.array(checked<string>(principalProblem)).superRefine(
  (principals, ctx) => {
    const seen = new Set<unknown>();
    principals.forEach((principal, i) => {
      if (seen.has(principal)) ctx.addIssue({ code: 'custom', message: `${String(principal)} is listed twice`, path: [i] });
      seen.add(principal);
    });
  },
  { when: (payload) => Array.isArray(payload.value) },
);

export const permissionsSection: ConfigSectionDescriptor<PermissionsSection, 'permissions'> = {
  name: 'permissions',
  noun: 'permission',
  schema: keyedBy(principalsSchema, keyRule(permissionCoordinateProblem)).transform((permissions) => mapValues(permissions, (principals) => [...principals].sort(compareText))),

  async export(db) {
    const principals = new Map<string, string[]>();
    for (const { coordinate, principal } of await listPermissions(db)) principals.set(coordinate, [...(principals.get(coordinate) ?? []), principal]);
    return sortedEntries([...principals].map(([coordinate, list]) => [coordinate, list.sort(compareText)]));
  },

  // One item per grant, with no fields: a grant is there or not, so it is added or removed, never changed.
  items: (permissions) => Object.entries(permissions).flatMap(([coordinate, principals]) => principals.map((principal) => ({ ref: [coordinate, principal], fields: {} }))),

  describe: ([coordinate, principal]) => `permission ${coordinate}: ${principal}`,

  async apply(tx, changes) {
    for (const { action, ref } of changes) {
      const [coordinate, principal] = ref;
      switch (action) {
        case 'add':
          await grantPermission(tx, principal, coordinate);
          break;
        case 'remove':
          await revokePermission(tx, principal, coordinate);
          break;
        case 'change': // a grant has no fields to change
          throw new Error(`a permission is granted or revoked, never changed (${coordinate}: ${principal})`);
        default:
          assertNever(action, 'change action');
      }
    }
  },
};
