import { locatedError, type GraphQLError, type GraphQLResolveInfo } from 'graphql';
import { pathToArray } from 'graphql/jsutils/Path.js';
import type { Context } from '../context.js';
import { maskError } from '../errors.js';
import {
  resolveUpstreamConnection,
  type ConnectionArgs,
} from '../pagination/resolve-upstream-connection.js';
import type { EndpointName } from '../upstream/endpoints.js';
import { toFilters, type FixedFilters } from './filter-args.js';

/**
 * The resolver of a connection over one upstream list: the field's arguments become the
 * endpoint's filters (checked first), plus the filters `fixed` takes from the parent, e.g. a
 * company's id for `Company.fundingEvents`. When a later upstream page fails, the edges already
 * paid for are returned and the error is reported at the field's path.
 */
export function upstreamList<E extends EndpointName, Parent = unknown>(
  endpoint: E,
  fixed?: FixedFilters<E, Parent>,
) {
  return (
    parent: Parent,
    args: ConnectionArgs & object,
    { upstream, config, fieldErrors }: Context,
    info: GraphQLResolveInfo,
  ) =>
    resolveUpstreamConnection(
      upstream,
      endpoint,
      toFilters(endpoint, args, config.cursorSecret, fixed, parent),
      args,
      config,
      (error) => {
        const located = locatedError(error, info.fieldNodes, pathToArray(info.path));
        fieldErrors.push(maskError(located, 'Unexpected error.') as GraphQLError);
      },
    );
}
