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
import './node.js';
import './entities.js';
import { withEntitiesField } from './entities-field.js';

/** The gateway's GraphQL schema (`/graphql`). */
export const schema = builder.toSchema({ sortSchema: false });

/**
 * The same graph as an Apollo Federation v2 subgraph (`/subgraph`): the node types as entities,
 * with `_entities` and `_service`. Its SDL is `subgraph.graphql`.
 */
export const subgraphSchema = withEntitiesField(
  builder.toSubGraphSchema({
    sortSchema: false,
    linkUrl: 'https://specs.apollo.dev/federation/v2.6',
    federationDirectives: ['@key', '@shareable'],
  }),
);
