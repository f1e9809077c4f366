// Reading and merging deferred payloads: the multipart body split by meros, parts merged at their paths, a failed part's null bubbled as without @defer.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFER_ACCEPT, mergePayloads, postDeferred, responseNullability, type Payload } from './defer-payloads.js';

const SCHEMA = buildSchema(/* GraphQL */ `
  type Query { shop: Shop! shops: [Shop] strict: [Shop!]! }
  type Shop { name: String! owner: Person items: [Item!]! }
  type Person { name: String! address: Address! }
  type Address { city: String! }
  type Item { sku: String! price: Int! }
`);

describe('mergePayloads', () => {
  it('merges each part at its path: objects by key, lists by index; errors appended', () => {
    const payloads: Payload[] = [
      { data: { shop: { name: 'A', items: [{ sku: '1' }, { sku: '2' }] } }, errors: [{ message: 'first', path: ['shop', 'x'] }], hasNext: true },
      { incremental: [{ data: { items: [{ price: 1 }, { price: 2 }] }, path: ['shop'], label: 'p' }], hasNext: true },
      {
        incremental: [
          { data: { owner: { name: 'O' } }, path: ['shop'] },
          { data: { sku: '2', price: 2 }, path: ['shop', 'items', 1], errors: [{ message: 'late', path: ['shop', 'items', 1, 'y'] }] },
        ],
        hasNext: false,
      },
    ];
    expect(mergePayloads(payloads)).toEqual({
      data: { shop: { name: 'A', items: [{ sku: '1', price: 1 }, { sku: '2', price: 2 }], owner: { name: 'O' } } },
      errors: [
        { message: 'first', path: ['shop', 'x'] },
        { message: 'late', path: ['shop', 'items', 1, 'y'] },
      ],
      problems: [],
    });
  });

  it('merges a part found inside another one, and a part at the root', () => {
    const payloads: Payload[] = [
      { data: {}, hasNext: true },
      { incremental: [{ data: { shop: { owner: {} } }, path: [] }], hasNext: true },
      { incremental: [{ data: { name: 'O', address: { city: 'Lyon' } }, path: ['shop', 'owner'] }], hasNext: false },
    ];
    expect(mergePayloads(payloads).data).toEqual({ shop: { owner: { name: 'O', address: { city: 'Lyon' } } } });
  });

  it('takes one JSON answer as it is', () => {
    expect(mergePayloads([{ data: { shop: null }, errors: [{ message: 'x', path: ['shop'] }] }])).toEqual({ data: { shop: null }, errors: [{ message: 'x', path: ['shop'] }], problems: [] });
  });

  it('does not change the payloads it merges', () => {
    const payloads: Payload[] = [
      { data: { shop: { name: 'A' } }, hasNext: true },
      { incremental: [{ data: { owner: null }, path: ['shop'] }], hasNext: false },
    ];
    const before = JSON.stringify(payloads);
    mergePayloads(payloads);
    expect(JSON.stringify(payloads)).toBe(before);
  });

  describe('a part whose non-null field failed (data: null) is bubbled as without @defer', () => {
    const query = '{ shop { owner { name address { city } } items { sku price } } shops { name } strict { name } }';
    const nullableAt = responseNullability(SCHEMA, query);
    const failed = (path: (string | number)[], data: unknown): Payload[] => [
      { data, hasNext: true },
      { incremental: [{ data: null, path, errors: [{ message: 'boom', path: [...path, 'x'], extensions: { code: 'E' } }] }], hasNext: false },
    ];

    it('to the part\'s own place when it is nullable', () => {
      const merged = mergePayloads(failed(['shop', 'owner'], { shop: { owner: {}, items: [] }, shops: [], strict: [] }), { nullableAt });
      expect(merged.data).toEqual({ shop: { owner: null, items: [] }, shops: [], strict: [] });
      expect(merged.errors).toEqual([{ message: 'boom', path: ['shop', 'owner', 'x'], extensions: { code: 'E' } }]);
    });

    it('through non-null positions to a nullable list item', () => {
      const merged = mergePayloads(failed(['shops', 1], { shop: { owner: null, items: [] }, shops: [{}, {}], strict: [] }), { nullableAt });
      expect(merged.data).toEqual({ shop: { owner: null, items: [] }, shops: [{}, null], strict: [] });
    });

    it('to the whole data when every position up to the root is non-null', () => {
      expect(mergePayloads(failed(['shop', 'items', 0], { shop: { owner: null, items: [{}] }, shops: [], strict: [] }), { nullableAt }).data).toBeNull();
      expect(mergePayloads(failed(['strict', 0], { shop: { owner: null, items: [] }, shops: [], strict: [{}] }), { nullableAt }).data).toBeNull();
      expect(mergePayloads(failed([], {}), { nullableAt }).data).toBeNull();
    });

    it('and a later part under the nulled position only adds its errors', () => {
      const payloads: Payload[] = [
        { data: { shop: { owner: {}, items: [] }, shops: [], strict: [] }, hasNext: true },
        { incremental: [{ data: null, path: ['shop', 'owner'], errors: [{ message: 'a', path: ['shop', 'owner', 'name'] }] }], hasNext: true },
        { incremental: [{ data: { city: 'Lyon' }, path: ['shop', 'owner', 'address'], errors: [{ message: 'b' }] }], hasNext: false },
      ];
      expect(mergePayloads(payloads, { nullableAt })).toEqual({ data: { shop: { owner: null, items: [] }, shops: [], strict: [] }, errors: [{ message: 'a', path: ['shop', 'owner', 'name'] }, { message: 'b' }], problems: [] });
    });

    it('is a problem when no nullability is given', () => {
      expect(mergePayloads(failed(['shop', 'owner'], { shop: { owner: {} } })).problems).toEqual(['the part at shop.owner failed and no nullability was given to bubble its null']);
    });
  });

  it('reports where the stream breaks the format', () => {
    expect(mergePayloads([{ data: {}, hasNext: true }]).problems).toEqual(['payload 0 of 1 has hasNext: true']);
    expect(mergePayloads([{ data: {}, hasNext: false }, { incremental: [], hasNext: false }]).problems).toEqual(['payload 0 of 2 has hasNext: false']);
    expect(mergePayloads([{ data: {}, hasNext: true }, { errors: [{ message: 'x' }] }]).problems).toEqual(['payload 1 of 2 has hasNext: undefined', 'later payload 1 has data or errors outside incremental']);
    expect(mergePayloads([{ data: { shop: { name: 'A' } }, hasNext: true }, { incremental: [{ data: { x: 1 }, path: ['shop', 'name'] }], hasNext: false }]).problems).toEqual(['the part at shop.name lands on "A", not an object']);
    expect(mergePayloads([{ data: { shops: [] }, hasNext: true }, { incremental: [{ items: [{}], path: ['shops', 0] }], hasNext: false }]).problems).toEqual(['@stream items at shops.0: not merged']);
    expect(mergePayloads([]).problems).toEqual(['no payload']);
  });
});

describe('responseNullability', () => {
  const schema = buildSchema(/* GraphQL */ `
    interface Named { name: String }
    type A implements Named { name: String! b: B! list: [B]! }
    type B implements Named { name: String c: [[Int!]] }
    union U = A | B
    type Query { a: A u: U! named: [Named!] }
  `);

  it('follows aliases, inline fragments, named fragments and lists', () => {
    const nullableAt = responseNullability(schema, '{ x: a { y: b { name } ...F } u { ... on A { b { c } } } named { ... on B { name } } } fragment F on A { list { c } }');
    expect(nullableAt(['x'])).toBe(true);
    expect(nullableAt(['x', 'y'])).toBe(false);
    expect(nullableAt(['x', 'y', 'name'])).toBe(true);
    expect(nullableAt(['x', 'list'])).toBe(false);
    expect(nullableAt(['x', 'list', 0])).toBe(true);
    expect(nullableAt(['x', 'list', 0, 'c', 1])).toBe(true);
    expect(nullableAt(['x', 'list', 0, 'c', 1, 0])).toBe(false);
    expect(nullableAt(['u'])).toBe(false);
    expect(nullableAt(['u', 'b'])).toBe(false);
    expect(nullableAt(['named', 0])).toBe(false);
    expect(nullableAt(['named', 0, 'name'])).toBe(true);
    expect(nullableAt(['nothing'])).toBe(true);
  });

  it('reads the named operation', () => {
    const nullableAt = responseNullability(schema, 'query One { a { b { name } } } query Two { a: u { __typename } }', 'Two');
    expect(nullableAt(['a'])).toBe(false);
  });
});

describe('postDeferred', () => {
  let server: Server;
  let url: string;
  let accept: string | undefined;
  const parts = ['{"data":{"shop":{"name":"A"}},"hasNext":true}', '{"incremental":[{"data":{"owner":{"name":"O"}},"path":["shop"]}],"hasNext":false}'];

  beforeAll(async () => {
    server = createServer((request, response) => {
      accept = request.headers.accept;
      if (request.url === '/json') {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end('{"errors":[{"message":"no","extensions":{"code":"BAD"}}]}');
        return;
      }
      response.writeHead(200, { 'content-type': 'multipart/mixed; boundary="-"; deferSpec=20220824' });
      // Written in pieces that cut through a part and a boundary, as a network may deliver it.
      const body = `\r\n---\r\n${parts.map((p) => `Content-Type: application/json; charset=utf-8\r\n\r\n${p}\r\n---`).join('\r\n')}--\r\n`;
      const cuts = [5, 40, 97, body.length];
      let from = 0;
      const next = () => {
        const to = cuts.shift();
        if (to === undefined) return void response.end();
        response.write(body.slice(from, to));
        from = to;
        setTimeout(next, 5);
      };
      next();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    // fetch keeps its connection alive: closed here, or close() waits for it to time out.
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads each part of a multipart body, asking for deferSpec=20220824', async () => {
    const response = await postDeferred(`${url}/multipart`, '{ shop { name ... @defer { owner { name } } } }');
    expect(accept).toBe(DEFER_ACCEPT);
    expect(response).toMatchObject({ status: 200, streamed: true, payloads: parts.map((p) => JSON.parse(p)) });
    expect(mergePayloads(response.payloads).data).toEqual({ shop: { name: 'A', owner: { name: 'O' } } });
  });

  it('reads a body that is not multipart as one answer', async () => {
    expect(await postDeferred(`${url}/json`, '{ shop { name } }')).toMatchObject({ status: 400, streamed: false, payloads: [{ errors: [{ message: 'no', extensions: { code: 'BAD' } }] }] });
  });
});
