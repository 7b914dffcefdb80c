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

/** The gateway's GraphQL schema. */
export const schema = builder.toSchema({ sortSchema: false });
