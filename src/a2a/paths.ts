import { AppError } from '../errors.js';

/**
 * Autonomous Database's A2A URLs (reference, "Autonomous Database A2A server"). They live in
 * one module because the client, the stand-in and the configuration check all build them,
 * and a wrong guess about Oracle's layout should be fixed in one place.
 */

/** `/adb/a2a/v1/databases/{ocid}`: what A2A_BASE_URL points at (its path part). */
export const a2aBasePath = (ocid: string) => `/adb/a2a/v1/databases/${encodeURIComponent(ocid)}`;

/** `/adb/auth/v1/databases/{ocid}/token` */
export const tokenPath = (ocid: string) =>
  `/adb/auth/v1/databases/${encodeURIComponent(ocid)}/token`;

/** The base URL without trailing slashes, so that joining paths never doubles one. */
export function trimBaseUrl(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

/** Where config.ts reads A2A_BASE_URL, which imports nothing of the project. */
export { deriveTokenUrl } from '../config.js';

export const listUrl = (baseUrl: string) => `${trimBaseUrl(baseUrl)}/agents/`;

/**
 * Each segment percent-encoded, and dot segments refused: encodeURIComponent leaves `.` and
 * `..` as they are, and URL normalisation would then resolve `agents/../` to a path above
 * the agents (with the bearer token going along).
 */
function segments(...parts: readonly string[]): string {
  return parts
    .map((part) => {
      if (part === '' || part === '.' || part === '..') {
        throw new AppError('BAD_USER_INPUT', `"${part}" is not a team name`);
      }
      return encodeURIComponent(part);
    })
    .join('/');
}

export const cardUrl = (baseUrl: string, teamName: string) =>
  `${trimBaseUrl(baseUrl)}/${segments('agents', teamName, '.well-known', 'agent-card.json')}`;
