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
import './node.js';
import { withSynchronousNodeIds } from './synchronous-node-ids.js';

/** The gateway's GraphQL schema. */
export const schema = withSynchronousNodeIds(builder.toSchema({ sortSchema: false }));
