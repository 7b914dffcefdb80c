import { locatedError, type GraphQLResolveInfo } from 'graphql';
import { pathToArray } from 'graphql/jsutils/Path.js';
import type { Context } from '../context.js';
import {
  resolveUpstreamConnection,
  type ConnectionArgs,
} from '../pagination/resolve-upstream-connection.js';
import type { EndpointFilters, EndpointName } from '../upstream/endpoints.js';
import { toFilters } from './filter-args.js';

/**
 * The resolver of a connection over one upstream list: the field's arguments become the
 * endpoint's filters (checked first), plus the filters `fixed` takes from the parent, e.g. a
 * company's id for `Company.fundingEvents`.
 */
export function upstreamList<E extends EndpointName, Parent = unknown>(
  endpoint: E,
  fixed?: (parent: Parent) => EndpointFilters<E>,
) {
  return (
    parent: Parent,
    args: ConnectionArgs & object,
    { upstream, config }: Context,
    info: GraphQLResolveInfo,
  ) =>
    resolveUpstreamConnection(
      upstream,
      endpoint,
      toFilters(endpoint, args, fixed?.(parent)),
      args,
      config,
      (error) =>
        upstream.partialErrors.push(locatedError(error, info.fieldNodes, pathToArray(info.path))),
    );
}
