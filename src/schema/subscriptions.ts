import type { Context } from '../context.js';
import { creditCostExtension } from '../estimate/credit-cost.js';
import type { Delivery } from '../live/live-feed.js';
import type { EventEndpoint } from '../live/poller-registry.js';
import { LiveSubscription } from '../live/live-subscription.js';
import type { EndpointFilters } from '../upstream/endpoints.js';
import { acquisitionNode } from '../nodes/acquisition-node.js';
import { execMoveNode } from '../nodes/exec-move-node.js';
import { fundingEventNode } from '../nodes/funding-event-node.js';
import type { NodeType } from '../nodes/node-type.js';
import { builder } from './builder.js';
import { filterArgs, toFilters } from './filter-args.js';
import { nodeRef } from './node-refs.js';

builder.subscriptionType({
  description:
    "New events as the service discovers them: the gateway polls the service with `since` (`POLL_INTERVAL_SECONDS`), one poller per workspace and filters shared by every subscriber, and pushes each new record once. A poll that finds nothing costs nothing; each record delivered counts a credit against the subscription's budget (`X-Credit-Budget`, else `SUBSCRIPTION_BUDGET_DEFAULT`).",
});

/** What a subscription field's event is: a record, or the error that ends the subscription. */
function resolveDelivery(delivery: Delivery) {
  if ('end' in delivery) {
    throw delivery.end;
  }
  return delivery.record;
}

/** The subscription field of one event list: its filters, `since`, one record per payload. */
function eventField<T extends { id: string }, H extends string, R extends { id: string }>(
  name: string,
  endpoint: EventEndpoint,
  node: NodeType<T, H, R>,
  what: string,
) {
  builder.subscriptionField(name, (t) =>
    t.field({
      type: nodeRef(node),
      description: `Each new ${what} matching the filters, once, oldest first. Without \`since\`, only those discovered after the subscription starts; with it, those discovered after \`since\` too.`,
      args: filterArgs(t.arg, endpoint),
      subscribe: (_root, args, context: Context) => {
        const { since, ...filters } = toFilters(endpoint, args, context.config.cursorSecret) as {
          since?: string;
        } & EndpointFilters<EventEndpoint>;
        const subscription = new LiveSubscription(context);
        context.subscription = subscription;
        return subscription.start({ endpoint, filters, since: since ?? null });
      },
      resolve: (delivery) => resolveDelivery(delivery as unknown as Delivery) as never,
      extensions: creditCostExtension({ kind: 'event' }),
    }),
  );
}

eventField('fundingEventAdded', 'fundingEvents', fundingEventNode, 'funding round');
eventField('execMoveAdded', 'execMoves', execMoveNode, 'executive move');
eventField('acquisitionAdded', 'acquisitions', acquisitionNode, 'acquisition or merger');
