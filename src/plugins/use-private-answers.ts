import type { Plugin } from 'graphql-yoga';
import { PRIVATE_CACHE_CONTROL, varyByCaller } from '../http/private-answers.js';

/** Yoga's adapter over `http/private-answers.ts`: every response is its caller's own. */
export function usePrivateAnswers(): Plugin {
  return {
    onResponse({ response }) {
      response.headers.set('cache-control', PRIVATE_CACHE_CONTROL);
      response.headers.set('vary', varyByCaller(response.headers.get('vary')));
    },
  };
}
