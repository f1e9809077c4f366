// What GraphiQL opens on: the document formatted with its variables, the tabs beside it, the token hint only when tokens are accepted, GraphiQL's own welcome otherwise.
import { describe, expect, it } from 'vitest';
import { openingTab } from './opening-tab.js';

const PAGE = { query: 'query P($id: ID!) { product(id: $id) { name } }', variables: { id: '2' } };
const DEFERRED = {
  query: 'query D($id: ID!) { product(id: $id) { name ... @defer(label: "reviews") { reviews { body } } } }',
  variables: { id: '3' },
  note: ['Reviews come later.', '', 'Watch the result pane.'],
};

describe('openingTab', () => {
  it('opens on the document, formatted, with its variables', () => {
    const tab = openingTab({ document: PAGE });
    expect(tab.defaultQuery).toContain('query P($id: ID!) {\n  product(id: $id) {\n    name\n  }\n}\n');
    expect(JSON.parse(tab.variables!)).toEqual({ id: '2' });
    expect(tab.defaultQuery).not.toContain('token');
  });

  it('says how to get a development token and where it goes when the router accepts them', () => {
    const tab = openingTab({ document: PAGE, devTokenHint: true });
    expect(tab.defaultQuery).toMatch(/^# .*\n(#.*\n)*\nquery P/);
    expect(tab.defaultQuery).toContain('#   npx switchyard token mint --sub alice\n');
    expect(tab.defaultQuery).toContain('Headers tab');
    expect(tab.defaultQuery).toContain('{"authorization": "Bearer <the token>"}');
    expect(openingTab({ devTokenHint: true }).defaultQuery).toContain('token mint');
  });

  it('opens one tab, as GraphiQL does by default, when no more tabs are asked for', () => {
    expect(openingTab({ document: PAGE, devTokenHint: true })).not.toHaveProperty('defaultTabs');
    expect(openingTab({ document: { ...PAGE, moreTabs: [] } })).not.toHaveProperty('defaultTabs');
  });

  it('opens more tabs beside the first, each formatted under its note, with its own variables', () => {
    const tab = openingTab({ document: { ...PAGE, moreTabs: [DEFERRED, { query: '{ products { name } }' }] }, devTokenHint: true });
    const [first, deferred, plain] = tab.defaultTabs!;
    expect(tab.defaultTabs).toHaveLength(3);
    // The first tab is the opening one: the same text and variables the editors open on.
    expect(first).toEqual({ query: tab.defaultQuery, variables: tab.variables });
    expect(first.query).toContain('token mint');
    expect(deferred.query).toBe(
      '# Reviews come later.\n#\n# Watch the result pane.\n\nquery D($id: ID!) {\n  product(id: $id) {\n    name\n    ... @defer(label: "reviews") {\n      reviews {\n        body\n      }\n    }\n  }\n}\n',
    );
    expect(JSON.parse(deferred.variables!)).toEqual({ id: '3' });
    // The hints belong to the opening tab only; a tab without a note or variables is its document alone.
    expect(plain).toEqual({ query: '{\n  products {\n    name\n  }\n}\n', variables: null });
  });

  it('keeps the opening tab as it was when more tabs are added', () => {
    const alone = openingTab({ document: PAGE, devTokenHint: true });
    const { defaultTabs, ...withMore } = openingTab({ document: { ...PAGE, moreTabs: [DEFERRED] }, devTokenHint: true });
    expect(withMore).toEqual(alone);
    expect(defaultTabs).toHaveLength(2);
  });

  it("leaves GraphiQL's own welcome text when there is nothing to say", () => {
    expect(openingTab({})).toEqual({});
  });

  it('refuses a document that does not parse, at start rather than in the browser', () => {
    expect(() => openingTab({ document: { query: '{ product(' } })).toThrow(/Syntax Error/);
    expect(() => openingTab({ document: { ...PAGE, moreTabs: [{ query: '{ product(id: "1") { ... @defer { name }' }] } })).toThrow(/Syntax Error/);
  });
});
