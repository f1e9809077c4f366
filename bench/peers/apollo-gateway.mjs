// Apollo Gateway in Apollo Server, default settings, serving a supergraph file: `node apollo-gateway.mjs SUPERGRAPH_FILE`.
// Plain JavaScript run from bench/peers/ so that it resolves the peers' own node_modules (the router's build never sees these packages).
import { readFileSync } from 'node:fs';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

const [supergraphFile] = process.argv.slice(2);
if (!supergraphFile) {
  console.error('usage: node apollo-gateway.mjs SUPERGRAPH_FILE');
  process.exit(2);
}

// Only what serving a static supergraph needs; every other option (fetcher, query plan cache, plugins) at its default.
const gateway = new ApolloGateway({ supergraphSdl: readFileSync(supergraphFile, 'utf8') });
const server = new ApolloServer({ gateway });
// Port 0: the kernel picks a free port and the URL says which; the bench waits for this line.
const { url } = await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: 0 } });
console.log(`Apollo Gateway on ${url}`);
// SIGTERM and SIGINT: Apollo Server stops itself and exits (its default stopOnTerminationSignals).
