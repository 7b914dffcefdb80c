import { specifiedDirectives } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './country.js';
import './source.js';
import './company.js';
import './investor.js';
import './person.js';
import './exec-move.js';
import './acquisition.js';
import './funding-event.js';
import './subscriptions.js';
import './alerts.js';
import './node.js';
import './entities.js';
import { withEntitiesField } from './entities-field.js';
import { COST_DIRECTIVES } from './cost-directives.js';
import { INCREMENTAL_DIRECTIVES } from './incremental-directives.js';

/**
 * The gateway's GraphQL schema (`/graphql`), with the cost directives' definitions and `@defer`
 * and `@stream`.
 */
export const schema = builder.toSchema({
  sortSchema: false,
  directives: [...specifiedDirectives, ...COST_DIRECTIVES, ...INCREMENTAL_DIRECTIVES],
});

/**
 * The same graph as an Apollo Federation v2 subgraph (`/subgraph`): the node types as entities,
 * with `_entities` and `_service`. Its SDL is `subgraph.graphql`.
 */
export const subgraphSchema = withEntitiesField(
  builder.toSubGraphSchema({
    sortSchema: false,
    // v2.9 is the first to define `@cost` and `@listSize` (weights as `Int`s).
    linkUrl: 'https://specs.apollo.dev/federation/v2.9',
    federationDirectives: ['@key', '@shareable', '@cost', '@listSize'],
  }),
);
