/**
 * One listener for the API and the console: requests under /ui go to the
 * console's app, every other one to the API's, untouched. Composed here, at
 * the server's fetch, so that neither app's routes (nor the API's OpenAPI
 * document, checked against `app.routes`) hold the other's.
 */
import { CONSOLE_PATH } from './session.js';

export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

const underConsole = (url: string): boolean => {
  // The path starts after "scheme://host"; avoid building a URL object for every API request.
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart < 0) return false;
  const rest = url.slice(pathStart, pathStart + CONSOLE_PATH.length + 1);
  return rest === CONSOLE_PATH || rest === `${CONSOLE_PATH}/` || rest === `${CONSOLE_PATH}?`;
};

export function withConsole(console: { fetch: FetchHandler }, api: { fetch: FetchHandler }): { fetch: FetchHandler } {
  return {
    fetch: (request, env) => (underConsole(request.url) ? console.fetch(request, env) : api.fetch(request, env)),
  };
}
