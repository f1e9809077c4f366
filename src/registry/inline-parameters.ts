// Query parameters inlined as escaped literals, for the embedded database's connection multiplexer (database.ts sends them so).
import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';

/**
 * The embedded server's connection multiplexer runs one protocol message at a time and may switch
 * connections between the Parse, Bind and Execute messages of a parameterised query (outside a
 * transaction), so two connections' unnamed statements can overwrite each other. A simple query is
 * one message, which it runs whole. So on the embedded database, parameters are inlined as escaped
 * literals, converted to text exactly as `pg` converts them for the extended protocol.
 */
export function inlineParameters(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)\b/g, (match, index: string) => {
    const position = Number(index) - 1;
    if (position < 0 || position >= params.length) throw new Error(`query refers to ${match} but has ${params.length} parameter(s)`);
    const value = pgUtils.prepareValue(params[position]) as unknown;
    if (value === null || value === undefined) return 'NULL';
    if (Buffer.isBuffer(value)) return `${pg.escapeLiteral(`\\x${value.toString('hex')}`)}::bytea`;
    return pg.escapeLiteral(String(value));
  });
}
