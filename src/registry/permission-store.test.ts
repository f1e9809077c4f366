// Unit tests of the permission rules' validation: the coordinates a rule may name, `introspection` among them, and the near misses refused by name.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/helpers/database.js';
import type { Database, Queryable } from './database.js';
import { loadMigrations, migrate } from './migrate.js';
import { grantPermission, INTROSPECTION, InvalidPermissionError, listPermissions, permissionCoordinateProblem, revokePermission } from './permission-store.js';

/** A store that records the statements it is sent and reports one row changed: validation must refuse before any. */
function recordingStore() {
  const statements: unknown[][] = [];
  const db: Queryable = {
    async query(sql: string, params?: unknown[]) {
      statements.push([sql, params]);
      return { command: '', oid: 0, fields: [], rows: [], rowCount: 1 };
    },
  };
  return { db, statements };
}

describe('permission coordinates', () => {
  it('takes Type.field, operation:Name and introspection', () => {
    for (const coordinate of ['Product.reviews', '_Hidden.field_2', 'operation:AdminReport', INTROSPECTION, 'Introspection.field', 'operation:Introspection']) {
      expect({ coordinate, problem: permissionCoordinateProblem(coordinate) }).toEqual({ coordinate, problem: undefined });
    }
    expect(INTROSPECTION).toBe('introspection');
  });

  it('names the near misses of introspection: another spelling, or an introspection field', () => {
    for (const coordinate of ['Introspection', 'INTROSPECTION', 'introspection:', ' introspection', 'introspect', 'introspection:*']) {
      expect(permissionCoordinateProblem(coordinate)).toBe(`invalid coordinate "${coordinate}": did you mean introspection (lower case, nothing around it)?`);
    }
    for (const coordinate of ['__schema', '__type', 'Query.__schema', 'Query.__type', 'query.__Schema']) {
      expect(permissionCoordinateProblem(coordinate)).toBe(`invalid coordinate "${coordinate}": introspection fields take no rule of their own; use introspection (who may introspect in production)`);
    }
  });

  it('refuses the rest with the forms it takes', () => {
    for (const coordinate of ['bad', 'Product.', 'operation:', 'Product.reviews.rating', '']) {
      expect(permissionCoordinateProblem(coordinate)).toBe(`invalid coordinate "${coordinate}": use Type.field, operation:Name or introspection`);
    }
    expect(permissionCoordinateProblem(7)).toBe('invalid coordinate "7": use Type.field, operation:Name or introspection');
  });

  it('grant writes the introspection rule, and refuses a near miss before writing anything', async () => {
    const { db, statements } = recordingStore();
    expect(await grantPermission(db, 'role:developer', 'introspection')).toBe(true);
    expect(statements).toEqual([[expect.stringMatching(/^insert into permissions/), ['role:developer', 'introspection']]]);
    await expect(grantPermission(db, 'role:developer', 'Introspection')).rejects.toThrow(new InvalidPermissionError('invalid coordinate "Introspection": did you mean introspection (lower case, nothing around it)?'));
    await expect(grantPermission(db, 'role:developer', 'Query.__schema')).rejects.toBeInstanceOf(InvalidPermissionError);
    expect(statements).toHaveLength(1);
  });

  it('revoke removes the introspection rule, and a row granted before near misses were refused (Query.__schema); another spelling is still refused', async () => {
    const { db, statements } = recordingStore();
    expect(await revokePermission(db, 'role:developer', 'introspection')).toBe(true);
    expect(await revokePermission(db, 'role:developer', 'Query.__schema')).toBe(true);
    await expect(revokePermission(db, 'role:developer', 'INTROSPECTION')).rejects.toThrow(/did you mean introspection/);
    expect(statements.map(([, params]) => params)).toEqual([
      ['role:developer', 'introspection'],
      ['role:developer', 'Query.__schema'],
    ]);
  });
});

describe('the permissions table', () => {
  let db: Database;
  useTestDatabase((opened) => (db = opened), { migrated: false });

  it('takes the introspection rule once migrated (014), keeping the rules it held', async () => {
    const all = await loadMigrations();
    expect(all.find((m) => m.version === 14)?.name).toBe('introspection_permission');
    await migrate(db, all.filter((m) => m.version < 14));
    await grantPermission(db, 'role:admin', 'operation:AdminReport');
    // Before 014 the table's own check refuses the coordinate.
    await expect(db.query(`insert into permissions (principal, coordinate) values ('role:developer', 'introspection')`)).rejects.toThrow(/permissions_coordinate_check/);

    expect(await migrate(db)).toEqual(all.filter((m) => m.version >= 14).map((m) => m.version));
    expect(await grantPermission(db, 'role:developer', INTROSPECTION)).toBe(true);
    expect((await listPermissions(db)).map(({ principal, coordinate }) => `${coordinate} ${principal}`)).toEqual(['introspection role:developer', 'operation:AdminReport role:admin']);
    // The table still refuses what is no coordinate, whatever writes to it.
    await expect(db.query(`insert into permissions (principal, coordinate) values ('role:developer', 'Introspection')`)).rejects.toThrow(/permissions_coordinate_check/);
    expect(await revokePermission(db, 'role:developer', INTROSPECTION)).toBe(true);
  });
});
