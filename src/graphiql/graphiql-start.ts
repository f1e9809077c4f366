// GraphiQL's browser start-up: points the editor's workers at the router's own copies, then renders Yoga's GraphiQL with the page's settings.
//
// `startGraphiQL` is self-contained (it reads no import and no module-level value), because the router
// serves its source text as a static script (see graphiql-assets.ts): a script file on the page's own
// origin is what a `script-src 'self'` policy admits, where an inline script would need a hash or
// 'unsafe-inline'. It needs a DOM, so test/integration/graphiql.test.ts checks it in a real browser.

/** The browser's globals that `startGraphiQL` uses; declared here so the file compiles without the DOM library. */
declare const document: any;
declare const self: any;

/** What the page hands the script, as JSON in a `<script type="application/json">` data block (never executed, so no CSP exception). */
export interface GraphiQLSettings {
  /** Monaco's worker label (`editorWorkerService`, `json`, `graphql`) to the worker script's same-origin URL. */
  workers: Record<string, string>;
  /** Options of `renderYogaGraphiQL` (graphql-yoga's `GraphiQLOptions`). */
  options: Record<string, unknown>;
}

/** Id of the data block that holds the settings. */
export const SETTINGS_ELEMENT_ID = 'graphiql-settings';

export function startGraphiQL(settingsElementId: string): void {
  const settings: GraphiQLSettings = JSON.parse(document.getElementById(settingsElementId).textContent);
  // Yoga's own page fetches the workers from a CDN and starts them from blob: URLs (a Worker must be
  // same-origin); served by the router, they start from their own URL and `worker-src 'self'` suffices.
  self.MonacoEnvironment = {
    globalAPI: false,
    // A method, not a named function expression: tools that keep function names (tsx) would wrap the
    // latter in a helper call that does not exist in the browser.
    getWorkerUrl(_moduleId: string, label: string): string {
      return settings.workers[label] ?? settings.workers.editorWorkerService;
    },
  };
  self.YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), settings.options);
}
