import type { ExecutionResult } from 'graphql';
import { getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Admission } from '../admission/admission.js';
import { bookingOf, type DoorContext } from '../admission/door-context.js';
import { NOTHING_SPENT } from '../credits/credit-extensions.js';
import { AnswerParts } from '../incremental/answer-parts.js';
import type { IncrementalPayload } from '../incremental/incremental-payload.js';

/**
 * Yoga's adapter over the admission (`admission/admission.ts`): every response gets its
 * `X-Request-Id`; a GraphQL request's caller is resolved once, before anything of it runs (or
 * taken from the server context, where the front left it, refusal included), and refused with
 * 401, 403 or 503 and nothing sent upstream; its document is the one the admission allows
 * (trusted documents, APQ); once its answer is ready, it carries its credit headers and is
 * reported (`Admission.admitParams`, `answer`, `answered`; a subscription's stream reports itself
 * when it ends). A query answered in parts (`@defer`, `@stream`) is reported once, when its last
 * payload is sent or its client goes away, with its payloads' errors and its totals; its headers,
 * sent with its first payload, carry no credit figures (its last payload's `extensions` do).
 * Requests that run no operation (GraphiQL's page, health, metrics, CORS preflights) are not
 * GraphQL requests, and pass.
 */
export function useAdmission(admission: Admission, endpoint: string): Plugin {
  return {
    onRequest({ request, serverContext }) {
      bookingOf(serverContext as DoorContext, request, endpoint);
    },
    onParams({ params, request, setParams, context }) {
      const door = context as DoorContext;
      bookingOf(door, request, endpoint);
      const search =
        request.method === 'GET' ? new URL(request.url, 'http://localhost').searchParams : null;
      const admitted = admission.admitParams(door, params, request.headers, search);
      return admitted instanceof Promise ? admitted.then(setParams) : setParams(admitted);
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
      const answered = admission.answer(booking, result as ExecutionResult);
      if (answered !== result) setResult(answered);
    },
    onResponse({ response, serverContext }) {
      const booking = (serverContext as DoorContext).booking;
      if (!booking) return;
      const { parts } = booking;
      if (!parts) return admission.answered(booking, response.status, response.headers);
      response.headers.set('x-request-id', booking.requestId);
      const { status } = response;
      parts.ended(() => {
        booking.result = parts.complete.result;
        admission.reportBooked(booking, status, booking.credits ?? NOTHING_SPENT);
      });
    },
  };
}
