// Unit tests of the dashboard page: its CSP admits exactly its own inline style and script, and that script runs on its own.
import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { renderDashboardPage } from './dashboard-page.js';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const inner = (html: string, tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1];

describe('dashboard page', () => {
  it('allows its own inline script and style by hash, and nothing else', () => {
    const { html, contentSecurityPolicy } = renderDashboardPage();
    const directives = Object.fromEntries(contentSecurityPolicy.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'script-src': hash(inner(html, 'script')),
      'style-src': hash(inner(html, 'style')),
      'connect-src': "'self'",
      'frame-ancestors': "'none'",
    });
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/);
  });

  it('embeds its settings as JSON that cannot close the script element', () => {
    const { html } = renderDashboardPage({ metricsUrl: '/metrics?x=</script><b>', pollMs: 2_000 });
    const script = inner(html, 'script');
    expect(script).not.toContain('</script');
    expect(script).toContain('"pollMs":2000');
    expect(html).toContain('Read from /metrics?x=&#60;/script&#62;&#60;b&#62; every 2 s');
  });

  it('has a script that runs in a bare context: the embedded functions need no module, import or Node global', async () => {
    const { html } = renderDashboardPage({ pollMs: 60_000 });
    const elements = new Map<string, Record<string, any>>();
    const fakeElement = (): Record<string, any> => ({
      dataset: {},
      classList: { toggle() {} },
      setAttribute() {},
      append() {},
      replaceChildren() {},
      remove() {},
    });
    const reads: string[] = [];
    const timers: unknown[] = [];
    let rendered!: () => void;
    const done = new Promise<void>((resolve) => (rendered = resolve));
    const context = {
      document: {
        title: 'Switchyard ops',
        body: fakeElement(),
        getElementById: (id: string) => elements.get(id) ?? elements.set(id, fakeElement()).get(id),
        querySelector: (selector: string) => elements.get(selector) ?? elements.set(selector, fakeElement()).get(selector),
        createElement: fakeElement,
        createElementNS: fakeElement,
      },
      fetch: async (url: string) => {
        reads.push(url);
        return { ok: true, status: 200, text: async () => 'switchyard_circuit_state{subgraph="product"} 1\n' };
      },
      performance: { now: () => 1 },
      AbortSignal: { timeout: () => undefined },
      setTimeout: (fn: unknown) => {
        timers.push(fn);
        rendered();
      },
    };
    runInNewContext(inner(html, 'script'), context);
    await done;
    expect(reads).toEqual(['/metrics']);
    expect(elements.get('status')).toMatchObject({ dataset: { state: 'live' }, textContent: expect.stringMatching(/^Live/) });
    expect(elements.get('subgraphs-empty')).toMatchObject({ hidden: true });
    expect(timers).toHaveLength(1);
  });
});
