// The three demo SDLs compose as Federation v2, from the files and from what the running subgraphs publish.
import { composeServices } from '@theguild/federation-composition';
import { buildSchema, isObjectType, parse } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { createServerPool, postGraphql } from './kit/test-client.js';
import { DEMO_SUBGRAPH_NAMES, demoSubgraphs, isDemoSubgraphName } from './index.js';

const pool = createServerPool();
afterAll(() => pool.closeAll());

function productFields(publicSdl: string): string[] {
  const product = buildSchema(publicSdl).getType('Product');
  if (!isObjectType(product)) throw new Error('Product is missing from the supergraph');
  return Object.keys(product.getFields()).sort();
}

describe('demo subgraphs', () => {
  it('maps each name to its factory', () => {
    expect(Object.keys(demoSubgraphs)).toEqual(['product', 'reviews', 'inventory']);
    expect(DEMO_SUBGRAPH_NAMES).toEqual(['product', 'reviews', 'inventory']);
    for (const name of DEMO_SUBGRAPH_NAMES) expect(demoSubgraphs[name]({ env: {} }).name).toBe(name);
    expect(isDemoSubgraphName('reviews')).toBe(true);
    expect(isDemoSubgraphName('toString')).toBe(false);
  });

  it('compose from their schema files into a supergraph where Product has fields from all three', () => {
    const result = composeServices(
      DEMO_SUBGRAPH_NAMES.map((name) => ({ name, typeDefs: parse(demoSubgraphs[name]({ env: {} }).sdl), url: `http://127.0.0.1/${name}` })),
    );
    expect(result.errors).toBeUndefined();
    expect(result.supergraphSdl).toContain('join__graph');
    expect(productFields(result.publicSdl!)).toEqual(['id', 'inventory', 'name', 'price', 'reviews']);
  });

  it('compose from the SDL the running subgraphs publish through _service', async () => {
    const services = await Promise.all(
      DEMO_SUBGRAPH_NAMES.map(async (name) => {
        const running = await pool.start(demoSubgraphs[name]({ env: {} }));
        const sdl: string = (await postGraphql(running.url, '{ _service { sdl } }')).body.data._service.sdl;
        return { name, typeDefs: parse(sdl), url: running.url };
      }),
    );
    const result = composeServices(services);
    expect(result.errors).toBeUndefined();
    expect(productFields(result.publicSdl!)).toEqual(['id', 'inventory', 'name', 'price', 'reviews']);
  });
});
