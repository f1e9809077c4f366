// The admin route table: a subgraph's own routes next to the kit's, 400/404/405/413/500 answered alike, bad tables refused at start.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdminInputError, createAdminApi, type AdminRoute } from './admin-api.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function serve(routes: AdminRoute[]): Promise<string> {
  const handleAdmin = createAdminApi(routes);
  server = createServer((req, res) => handleAdmin(req, res, (req.url ?? '/').split('?')[0]));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function call(url: string, method: string, body?: string): Promise<{ status: number; allow: string | null; body: unknown }> {
  const response = await fetch(url, { method, body, headers: body === undefined ? {} : { 'content-type': 'application/json' } });
  return { status: response.status, allow: response.headers.get('allow'), body: await response.json() };
}

describe('admin route table', () => {
  const counter = { value: 0 };
  const routes: AdminRoute[] = [
    { path: '/admin/counter', method: 'GET', handle: () => ({ value: counter.value }) },
    {
      path: '/admin/counter',
      method: 'POST',
      json: true,
      handle(body) {
        const by = (body as { by?: unknown }).by;
        if (typeof by !== 'number') throw new AdminInputError('by must be a number', [`got ${JSON.stringify(by)}`]);
        counter.value += by;
        return { value: counter.value };
      },
    },
    {
      path: '/admin/broken',
      method: 'POST',
      handle() {
        throw new Error('boom');
      },
    },
  ];

  it('serves a route with and without a JSON body, and answers 400 for an AdminInputError', async () => {
    const base = await serve(routes);
    expect(await call(`${base}/admin/counter`, 'POST', JSON.stringify({ by: 2 }))).toMatchObject({ status: 200, body: { value: 2 } });
    expect(await call(`${base}/admin/counter?x=1`, 'GET')).toMatchObject({ status: 200, body: { value: 2 } });
    expect(await call(`${base}/admin/counter`, 'POST', JSON.stringify({ by: 'two' }))).toMatchObject({ status: 400, body: { error: 'by must be a number', problems: ['got "two"'] } });
    expect(await call(`${base}/admin/counter`, 'POST', '{by:')).toMatchObject({ status: 400, body: { error: 'body is not valid JSON' } });
    expect(await call(`${base}/admin/counter`, 'POST', JSON.stringify({ by: 'x'.repeat(70_000) }))).toMatchObject({ status: 413 });
    expect(counter.value).toBe(2);
  });

  it('answers 404 for an unknown path, 405 with Allow for an unknown method, 500 when a route throws', async () => {
    const base = await serve(routes);
    expect(await call(`${base}/admin/nothing`, 'GET')).toEqual({ status: 404, allow: null, body: { error: 'no admin route /admin/nothing' } });
    expect(await call(`${base}/admin/counter`, 'DELETE')).toMatchObject({ status: 405, allow: 'GET, POST' });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await call(`${base}/admin/broken`, 'POST')).toEqual({ status: 500, allow: null, body: { error: 'admin route failed' } });
      expect(logged).toHaveBeenCalledWith('admin route POST /admin/broken failed:', expect.any(Error));
    } finally {
      logged.mockRestore();
    }
  });

  it('refuses a table with a path outside /admin/ or a route defined twice', () => {
    expect(() => createAdminApi([{ path: '/inventory', method: 'POST', handle: () => null }])).toThrow(/must start with \/admin\//);
    expect(() => createAdminApi([routes[0], { ...routes[0] }])).toThrow('admin route GET /admin/counter is defined twice');
  });
});
