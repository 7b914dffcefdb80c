import type { ExecutionResult } from 'graphql';
import { getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Admission } from '../admission/admission.js';
import { bookingOf, type Booking, type DoorContext } from '../admission/door-context.js';
import { codesOf, outcomeOf } from '../admission/operation-report.js';
import type { Caller } from '../auth/create-authenticator.js';
import {
  NOTHING_SPENT,
  setCreditHeaders,
  type CreditExtensions,
} from '../credits/credit-extensions.js';
import { AnswerParts } from '../incremental/answer-parts.js';
import type { IncrementalPayload } from '../incremental/incremental-payload.js';

/**
 * The HTTP door's adapter over the admission (`admission/admission.ts`), for Yoga: every response
 * gets its `X-Request-Id`; a GraphQL request's caller is resolved once, before anything of it runs
 * (or taken from the server context, where the front left it, refusal included), and refused with
 * 401, 403 or 503 and nothing sent upstream; its document is the one the admission allows
 * (trusted documents, APQ); once its answer is ready, it carries its credit headers and is
 * reported (a subscription's stream reports itself when it ends). A query answered in parts
 * (`@defer`, `@stream`) is reported once, when its last payload is sent or its client goes away,
 * with its payloads' errors and its totals; its headers, sent with its first payload, carry no
 * credit figures (its last payload's `extensions` do). Requests that run no operation
 * (GraphiQL's page, health, metrics, CORS preflights) are not GraphQL requests, and pass.
 */
export function useAdmission(admission: Admission, endpoint: string): Plugin {
  return {
    onRequest({ request, serverContext }) {
      bookingOf(serverContext as DoorContext, request, endpoint);
    },
    // Not async where nothing needs waiting for: an API key, a token verified before.
    onParams({ params, request, setParams, context }) {
      const door = context as DoorContext;
      const booking = bookingOf(door, request, endpoint);
      if (typeof params.operationName === 'string') booking.operation = params.operationName;
      if (door.refused) throw door.refused;
      const search =
        request.method === 'GET' ? new URL(request.url, 'http://localhost').searchParams : null;
      const proceed = (caller: Caller | Error) => {
        if (caller instanceof Error) throw caller;
        door.caller = caller;
        setParams(admission.documents.resolve(params, search));
      };
      if (door.caller) return proceed(door.caller);
      const caller = admission.caller(request.headers);
      return caller instanceof Promise ? caller.then(proceed) : proceed(caller);
    },
    onExecute({ args }) {
      const booking = (args.contextValue as DoorContext).booking;
      if (!booking) return;
      const operation = getOperationAST(args.document, args.operationName);
      booking.type = operation?.operation ?? null;
      if (operation?.name) booking.operation = operation.name.value;
    },
    onSubscribe({ args }) {
      const booking = (args.contextValue as DoorContext).booking;
      if (!booking) return;
      booking.type = 'subscription';
      const name = getOperationAST(args.document, args.operationName)?.name?.value;
      if (name) booking.operation = name;
    },
    onResultProcess({ result, setResult, serverContext }) {
      const booking = (serverContext as DoorContext).booking;
      if (Array.isArray(result)) return;
      if (isAsyncIterable(result)) {
        if (!booking || booking.type === 'subscription') return;
        booking.parts = new AnswerParts();
        setResult(
          booking.parts.track(result as AsyncIterable<IncrementalPayload>) as typeof result,
        );
        return;
      }
      let answered = result as ExecutionResult;
      // A request that never reached execution (a syntax or validation error) spent nothing.
      if (!(answered.extensions as Partial<CreditExtensions> | undefined)?.credits) {
        answered = { ...answered, extensions: { ...answered.extensions, ...NOTHING_SPENT } };
        setResult(answered);
      }
      if (booking) booking.result = answered;
    },
    onResponse({ response, serverContext }) {
      const booking = (serverContext as DoorContext).booking;
      if (!booking) return;
      response.headers.set('x-request-id', booking.requestId);
      const { parts, result } = booking;
      if (parts) {
        const { status } = response;
        parts.ended(() => {
          booking.result = parts.complete.result;
          report(booking, status, booking.credits ?? NOTHING_SPENT);
        });
        return;
      }
      if (!result) return;
      const credits = (result.extensions as CreditExtensions | undefined) ?? NOTHING_SPENT;
      setCreditHeaders(response.headers, credits.credits);
      report(booking, response.status, booking.credits ?? creditsOnly(credits));
    },
  };

  function report(booking: Booking, status: number, credits: CreditExtensions): void {
    const result = booking.result ?? {};
    admission.report({
      requestId: booking.requestId,
      endpoint: booking.endpoint,
      door: booking.door,
      operation: booking.operation,
      type: booking.type,
      status,
      ms: performance.now() - booking.started,
      outcome: outcomeOf(result),
      codes: codesOf(result.errors),
      credits,
      traceId: booking.trace?.traceId,
    });
  }
}

/** The credit members of a result's extensions (it may carry others). */
function creditsOnly(extensions: CreditExtensions): CreditExtensions {
  const { credits, upstreamRequests, upstreamRetries, stale } = extensions;
  return { credits, upstreamRequests, upstreamRetries, ...(stale ? { stale } : {}) };
}
