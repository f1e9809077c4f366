import { describe, expect, it } from 'vitest';
import { ResourceStack } from './resource-stack.js';

describe('a process releases what it opened', () => {
  it('in the reverse of the order it was opened', async () => {
    const released: string[] = [];
    const stack = new ResourceStack(() => {});
    for (const name of ['database', 'audit writer', 'server']) stack.push(() => void released.push(name), `${name} failed`);
    await stack.close();
    expect(released).toEqual(['server', 'audit writer', 'database']);
  });

  it('reports a release that fails and still releases the rest', async () => {
    const released: string[] = [];
    const failures: [string, unknown, string][] = [];
    const stack = new ResourceStack((message, error, level) => failures.push([message, error, level]));
    const refused = new Error('connection refused');
    stack.push(() => void released.push('database'), 'database could not be closed');
    stack.push(() => Promise.reject(refused), 'audit log: entries could not be saved');
    stack.push(() => {
      throw refused;
    }, 'tracing: spans could not be exported', 'warn');
    await expect(stack.close()).resolves.toBeUndefined();
    expect(released).toEqual(['database']);
    expect(failures).toEqual([
      ['tracing: spans could not be exported', refused, 'warn'],
      ['audit log: entries could not be saved', refused, 'error'],
    ]);
  });

  it('releases once however often it is closed', async () => {
    let releases = 0;
    const stack = new ResourceStack(() => {});
    stack.push(() => releases++, 'counter');
    await Promise.all([stack.close(), stack.close()]);
    await stack.close();
    expect(releases).toBe(1);
  });
});
