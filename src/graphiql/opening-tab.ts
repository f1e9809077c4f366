// What GraphiQL opens on: a document with its variables (the demo's product page), the tabs opened beside it, and how to sign in when development tokens are accepted.
import { parse, print } from 'graphql';
import type { GraphiQLOptions } from 'graphql-yoga';

/** One tab's document. */
export interface TabDocument {
  /** A GraphQL document; shown formatted (graphql-js's printer), so it may be written on one line. */
  query: string;
  /** Its variables, shown in the variables editor. */
  variables?: Record<string, unknown>;
  /** Comment lines shown above the document, each without its `#` (short: see RUN_HINT). Default none. */
  note?: readonly string[];
}

export interface OpeningDocument extends TabDocument {
  /** Tabs opened beside this one, in order (the demo: its product page with the reviews deferred). Default none: one tab. */
  moreTabs?: readonly TabDocument[];
}

/** Options of Yoga's GraphiQL; `variables` is read by Yoga's GraphiQL component though its options type does not name it. */
export type OpeningTab = Pick<GraphiQLOptions, 'defaultQuery' | 'defaultTabs'> & { variables?: string };

export interface OpeningTabOptions {
  /** Unset: GraphiQL's own welcome text (unless the token hint is on). */
  document?: OpeningDocument;
  /** Say how to get a development token and where it goes: on when the router accepts them and authentication is not off. Default false. */
  devTokenHint?: boolean;
}

// Short lines: the editor is about 60 characters wide on a laptop screen.
const RUN_HINT = ['# Ctrl-Enter or the ▶ button runs the operation;', '# the top button on the left opens the schema docs.'];

const DEV_TOKEN_HINT = [
  '#',
  '# Requests are anonymous until you send a token.',
  '# To call as a user, mint a development token:',
  '#   npx switchyard token mint --sub alice',
  '# and put it in the Headers tab below:',
  '#   {"authorization": "Bearer <the token>"}',
];

/**
 * GraphiQL's `defaultQuery` and `defaultTabs` apply only while the browser has no tabs of its own
 * stored, so a reload keeps what the user typed. The variables go in Yoga's `variables` (GraphiQL's
 * `initialVariables`): GraphiQL 5 fills its variables editor from that alone when it opens, and from
 * a tab's own variables only when that tab is selected. So with more tabs, the first is given twice:
 * as `defaultQuery` and `variables` (what the editors show at first) and as `defaultTabs[0]` (what
 * they show when the user comes back to it).
 */
export function openingTab(options: OpeningTabOptions): OpeningTab {
  const { document } = options;
  if (!document && !options.devTokenHint) return {};
  const tab: OpeningTab = { defaultQuery: editorText([...RUN_HINT, ...(options.devTokenHint ? DEV_TOKEN_HINT : [])], document) };
  if (document?.variables) tab.variables = variablesText(document.variables);
  if (document?.moreTabs?.length) {
    const tabs = document.moreTabs.map((more) => ({ query: editorText([], more), variables: more.variables ? variablesText(more.variables) : null }));
    tab.defaultTabs = [{ query: tab.defaultQuery!, variables: tab.variables ?? null }, ...tabs];
  }
  return tab;
}

/** The hint lines, the document's note, a blank line between comments and the document, then the document formatted (a document that does not parse throws here, at start). */
function editorText(hint: readonly string[], document: TabDocument | undefined): string {
  const lines = [...hint, ...(document?.note ?? []).map((line) => (line ? `# ${line}` : '#'))];
  if (lines.length > 0) lines.push('');
  if (document) lines.push(print(parse(document.query)));
  return `${lines.join('\n')}\n`;
}

function variablesText(variables: Record<string, unknown>): string {
  return JSON.stringify(variables, null, 2);
}
