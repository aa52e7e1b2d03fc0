import {
  createRemoteJWKSet,
  type JWTPayload,
  type JWTVerifyGetKey,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import type { AuthConfig } from '../config.js';
import { AppError } from '../errors.js';
import { type Clock, systemClock } from '../model/clock.js';
import { ANONYMOUS_ADMIN, tokenExpiry, type Viewer } from '../model/viewer.js';

/** A viewer at once where there is nothing to verify (no JWT configured), else a promise. */
export type Authenticate = (authorization: string | null | undefined) => Viewer | Promise<Viewer>;

const unauthenticated = (message: string) => new AppError('UNAUTHENTICATED', message);

/**
 * Verifies `Authorization: Bearer <jwt>` (HS256 with a shared secret, or RS256/ES256 keys
 * from a JWKS URL) and turns the claims into a Viewer. Messages say what is wrong with the
 * token without repeating it.
 */
export function createAuthenticator(auth: AuthConfig, clock: Clock = systemClock): Authenticate {
  const jwt = auth.jwt;
  if (!jwt) return () => ANONYMOUS_ADMIN;
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
        currentDate: new Date(clock.now()),
      }));
    } catch (error) {
      throw unauthenticated(`invalid token: ${reason(error)}`);
    }
    const viewer = viewerFrom(payload, auth);
    return payload.exp === undefined
      ? viewer
      : { ...viewer, expiry: tokenExpiry(payload.exp * 1000, clock) };
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

/**
 * A non-quoted Oracle identifier: an ASCII letter, then ASCII letters, digits, `_`, `$`, `#`,
 * at most 128 characters. Checked before anything else so that no Unicode case mapping can
 * turn one name into another (`ſ`.toUpperCase() is `S`).
 */
const ORACLE_USER_NAME = /^[A-Za-z][A-Za-z0-9_$#]{0,127}$/;

/**
 * The owner a `db_user` claim names. One rule, Oracle's for a non-quoted name: a claim of
 * that shape, upper-cased (ASCII only), is compared exactly with the OWNER columns. Anything
 * else (spaces, quotes, non-ASCII letters, a quoted mixed-case user) is refused.
 */
export function ownerFromClaim(claim: unknown): string | null {
  if (typeof claim !== 'string' || !ORACLE_USER_NAME.test(claim)) return null;
  return claim.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 32));
}

export function viewerFrom(payload: JWTPayload, auth: AuthConfig): Viewer {
  const roles = payload[auth.rolesClaim];
  const admin = Array.isArray(roles) ? roles.includes('admin') : roles === 'admin';
  const user = payload[auth.userClaim];
  const owner = ownerFromClaim(user);
  const subject = typeof payload.sub === 'string' ? payload.sub : null;
  if (admin) return { owner: null, admin, subject };
  if (user === undefined) throw unauthenticated(`token has no "${auth.userClaim}" claim`);
  if (!owner) throw unauthenticated(`token's "${auth.userClaim}" claim is not an Oracle user name`);
  return { owner, admin, subject };
}
