// What GraphiQL opens on: a document with its variables (the demo's product page), and how to sign in when development tokens are accepted.
import { parse, print } from 'graphql';
import type { GraphiQLOptions } from 'graphql-yoga';

export interface OpeningDocument {
  /** A GraphQL document; shown formatted (graphql-js's printer), so it may be written on one line. */
  query: string;
  /** Its variables, shown in the variables editor. */
  variables?: Record<string, unknown>;
}

/** Options of Yoga's GraphiQL; `variables` is read by Yoga's GraphiQL component though its options type does not name it. */
export type OpeningTab = Pick<GraphiQLOptions, 'defaultQuery'> & { variables?: string };

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
 * GraphiQL's `defaultQuery` applies only while the browser has no tabs of its own stored, so a reload
 * keeps what the user typed. The variables go in Yoga's `variables` (GraphiQL's `initialVariables`):
 * GraphiQL 5 fills its variables editor from that alone, never from a default tab's variables.
 */
export function openingTab(options: OpeningTabOptions): OpeningTab {
  if (!options.document && !options.devTokenHint) return {};
  const lines = [...RUN_HINT, ...(options.devTokenHint ? DEV_TOKEN_HINT : []), ''];
  if (options.document) lines.push(print(parse(options.document.query)));
  const tab: OpeningTab = { defaultQuery: `${lines.join('\n')}\n` };
  if (options.document?.variables) tab.variables = JSON.stringify(options.document.variables, null, 2);
  return tab;
}
