// A federation case's subgraphs on ephemeral ports, composed into a supergraph file a router serves; and its answers' errors as the case tests compare them.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { composeSupergraph } from '../../src/gateway/compose.js';
import type { FederationFixture } from '../fixtures/federation/federation-fixture.js';
import { startFixtureSubgraph, type RunningFixture } from './fixture-subgraph.js';

export interface CaseSupergraph {
  /** In the order of the case's subgraphs. */
  subgraphs: RunningFixture[];
  /** `<dir>/<name>.graphql`. */
  supergraphFile: string;
}

/** Starts the fixtures and writes their supergraph; a case that does not compose stops them and throws with every composition error. */
export async function startCaseSupergraph(name: string, fixtures: FederationFixture[], dir: string): Promise<CaseSupergraph> {
  const subgraphs: RunningFixture[] = [];
  try {
    for (const s of fixtures) subgraphs.push(await startFixtureSubgraph({ sdl: s.sdl, resolvers: s.resolvers }));
    const outcome = composeSupergraph(fixtures.map((s, i) => ({ name: s.name, url: subgraphs[i].url, sdl: s.sdl })));
    if (!outcome.ok) throw new Error(`case ${name} does not compose:\n${outcome.errors.map((e) => `${e.code}: ${e.message}`).join('\n')}`);
    const supergraphFile = path.join(dir, `${name}.graphql`);
    await writeFile(supergraphFile, outcome.supergraphSdl);
    return { subgraphs, supergraphFile };
  } catch (error) {
    await Promise.all(subgraphs.map((s) => s.close()));
    throw error;
  }
}

interface AnswerError {
  path?: readonly (string | number)[];
  extensions?: { readonly [key: string]: unknown };
}

/** Errors as the case tests compare them: path and code, in path order. */
export const byPath = (a: { path?: unknown }, b: { path?: unknown }) => String(JSON.stringify(a.path)).localeCompare(String(JSON.stringify(b.path)));
export const errorsOf = (body: { errors?: readonly AnswerError[] }) => (body.errors ?? []).map((e) => ({ path: e.path, code: e.extensions?.code })).sort(byPath);
