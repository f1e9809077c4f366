// What GraphiQL opens on: the document formatted with its variables, the token hint only when tokens are accepted, GraphiQL's own welcome otherwise.
import { describe, expect, it } from 'vitest';
import { openingTab } from './opening-tab.js';

const PAGE = { query: 'query P($id: ID!) { product(id: $id) { name } }', variables: { id: '2' } };

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

  it("leaves GraphiQL's own welcome text when there is nothing to say", () => {
    expect(openingTab({})).toEqual({});
  });

  it('refuses a document that does not parse, at start rather than in the browser', () => {
    expect(() => openingTab({ document: { query: '{ product(' } })).toThrow(/Syntax Error/);
  });
});
