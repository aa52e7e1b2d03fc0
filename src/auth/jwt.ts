import {
  createRemoteJWKSet,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { AuthConfig } from '../config.js';
import { AppError } from '../errors.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../model/viewer.js';

export type Authenticate = (authorization: string | null | undefined) => Promise<Viewer>;

const unauthenticated = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * Verifies `Authorization: Bearer <jwt>` (HS256 with a shared secret, or RS256/ES256 keys
 * from a JWKS URL) and turns the claims into a Viewer. Messages say what is wrong with the
 * token without repeating it.
 */
export function createAuthenticator(auth: AuthConfig): Authenticate {
  const jwt = auth.jwt;
  if (!jwt) return async () => ANONYMOUS_ADMIN;
  const key: Uint8Array | JWTVerifyGetKey =
    jwt.kind === 'secret'
      ? new TextEncoder().encode(jwt.secret)
      : createRemoteJWKSet(new URL(jwt.url));
  const algorithms = jwt.kind === 'secret' ? ['HS256'] : ['RS256', 'ES256'];

  return async (authorization) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match?.[1]) throw unauthenticated('missing bearer token (Authorization: Bearer <jwt>)');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(match[1], key as Uint8Array, {
        algorithms,
        issuer: auth.issuer,
        audience: auth.audience,
      }));
    } catch (error) {
      throw unauthenticated(`invalid token: ${reason(error)}`);
    }
    const viewer = viewerFrom(payload, auth);
    return payload.exp === undefined ? viewer : { ...viewer, expiresAt: payload.exp * 1000 };
  };
}

function reason(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed)
    return `claim "${error.claim}" is not accepted`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'bad signature';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'no matching key';
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid)
    return 'malformed';
  return 'not verifiable';
}

export function viewerFrom(payload: JWTPayload, auth: AuthConfig): Viewer {
  const roles = payload[auth.rolesClaim];
  const admin = Array.isArray(roles) ? roles.includes('admin') : roles === 'admin';
  const user = payload[auth.userClaim];
  const owner = typeof user === 'string' && user.trim() !== '' ? user.trim().toUpperCase() : null;
  if (!admin && !owner) throw unauthenticated(`token has no "${auth.userClaim}" claim`);
  return {
    owner: admin ? null : owner,
    admin,
    subject: typeof payload.sub === 'string' ? payload.sub : null,
  };
}
