// Process entry: the three fast demo subgraphs in one process (one event loop on the load core), their URLs on one stdout line.
import { FAST_DEMO_SUBGRAPH_NAMES, fastDemoSchema } from './fast-demo-subgraphs.js';
import { serveFastSubgraphs } from './fast-subgraph-server.js';
import { FAST_DEMO_LABEL } from './demo-subgraphs.js';

await serveFastSubgraphs(FAST_DEMO_LABEL, Object.fromEntries(FAST_DEMO_SUBGRAPH_NAMES.map((name) => [name, fastDemoSchema(name)])));
