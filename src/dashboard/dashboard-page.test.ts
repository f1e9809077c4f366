// Unit tests of the dashboard page: its CSP admits exactly its own inline style and script file, and the file it serves runs on its own.
import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { renderDashboardPage, SETTINGS_ELEMENT_ID, type DashboardPage } from './dashboard-page.js';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const inner = (html: string, tag: string) => new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1];
const settingsBlock = (html: string) => new RegExp(`<script type="application/json" id="${SETTINGS_ELEMENT_ID}">([\\s\\S]*?)</script>`).exec(html)![1];
/** The one script file the page loads, as the router serves it. */
function scriptFile({ html, files }: DashboardPage): { path: string; integrity: string; text: string } {
  const [, path, integrity] = /<script src="([^"]+)" integrity="([^"]+)"><\/script>/.exec(html)!;
  return { path, integrity, text: Buffer.from(files.get(path)!.body).toString('utf8') };
}

describe('dashboard page', () => {
  it('allows its own script file and inline style by hash, and nothing else', () => {
    const page = renderDashboardPage();
    const { html, contentSecurityPolicy } = page;
    const script = scriptFile(page);
    const directives = Object.fromEntries(contentSecurityPolicy.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(`'${script.integrity}'`).toBe(hash(script.text));
    expect(directives).toMatchObject({
      'default-src': "'none'",
      'script-src': hash(script.text),
      'style-src': hash(inner(html, 'style')),
      'connect-src': "'self'",
      'frame-ancestors': "'none'",
    });
    // One script that runs (the file) and one JSON data block, which never runs.
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toMatch(/<script>/);
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/);
  });

  it('has a subscriptions section: a table per subscribed operation, its empty state, and a line of upstream subscriptions hidden until there is one', () => {
    const { html } = renderDashboardPage();
    const section = /<section aria-labelledby="subscriptions-title">([\s\S]*?)<\/section>/.exec(html)![1];
    const headers = [...section.matchAll(/<th scope="col">(.*?)<\/th>/g)].map(([, text]) => text.replace(/<[^>]+>/g, ''));
    expect(headers).toEqual(['Operation', 'Open', 'Events out', 'Time to complete p50 / p99', 'Dropped']);
    expect(section).toContain('<p class="empty" id="subscriptions-empty">No subscription yet: they appear once a client subscribes.</p>');
    expect(section).toMatch(/<p class="upstreams" id="upstreams" hidden>[^<]*<span id="upstreams-list"><\/span><\/p>/);
    // The page reads the subscription metrics by the exporter's names.
    expect(JSON.parse(settingsBlock(html)).names).toMatchObject({ subscriptionsActive: 'switchyard_subscriptions_active', subscriptionEventDuration: 'switchyard_subscription_event_seconds' });
  });

  it('embeds its settings as JSON that cannot close the script element', () => {
    const { html } = renderDashboardPage({ metricsUrl: '/metrics?x=</script><b>', pollMs: 2_000 });
    const settings = settingsBlock(html);
    expect(settings).not.toContain('</script');
    expect(JSON.parse(settings)).toMatchObject({ metricsUrl: '/metrics?x=</script><b>', pollMs: 2_000 });
    expect(html).toContain('Read from /metrics?x=&#60;/script&#62;&#60;b&#62; every 2 s');
  });

  it('serves one script file for any settings, under a path that names its content', () => {
    const a = scriptFile(renderDashboardPage());
    const b = scriptFile(renderDashboardPage({ metricsUrl: '/other', pollMs: 5_000, assetPrefix: '/ops/assets/' }));
    expect(a.text).toBe(b.text);
    expect(a.path).toMatch(/^\/dashboard\/assets\/[0-9a-f]{12}\/dashboard\.js$/);
    expect(b.path).toBe(a.path.replace('/dashboard/assets/', '/ops/assets/'));
  });

  it('has a script file that runs in a bare context: the embedded functions need no module, import or Node global', async () => {
    const page = renderDashboardPage({ pollMs: 60_000 });
    const elements = new Map<string, Record<string, any>>([[SETTINGS_ELEMENT_ID, { textContent: settingsBlock(page.html) }]]);
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
        return {
          ok: true,
          status: 200,
          text: async () => 'switchyard_circuit_state{subgraph="product"} 1\nswitchyard_subscriptions_active{operation="Stock"} 2\nswitchyard_subscription_upstreams{subgraph="inventory"} 1\n',
        };
      },
      performance: { now: () => 1 },
      AbortSignal: { timeout: () => undefined },
      setTimeout: (fn: unknown) => {
        timers.push(fn);
        rendered();
      },
    };
    runInNewContext(scriptFile(page).text, context);
    await done;
    expect(reads).toEqual(['/metrics']);
    expect(elements.get('status')).toMatchObject({ dataset: { state: 'live' }, textContent: expect.stringMatching(/^Live/) });
    expect(elements.get('subgraphs-empty')).toMatchObject({ hidden: true });
    expect(elements.get('operations-empty')).toMatchObject({ hidden: false });
    expect(elements.get('subscriptions-empty')).toMatchObject({ hidden: true });
    expect(elements.get('upstreams')).toMatchObject({ hidden: false });
    expect(timers).toHaveLength(1);
  });
});
