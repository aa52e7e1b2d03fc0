import { SignJWT } from 'jose';
import type { AuthConfig } from '../config.js';
import { ownerFromClaim } from './jwt.js';

export interface TokenRequest {
  /** The database owner the caller acts as (AUTH_USER_CLAIM); optional for an admin. */
  readonly user?: string | undefined;
  readonly roles: readonly string[];
  /** A time span such as `8h`, `30m` or `7d`: at most MAX_TOKEN_LIFETIME. */
  readonly expiresIn: string;
}

/** Development tokens live at most this long: a leaked one must not outlive its use. */
const MAX_TOKEN_DAYS = 30;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/** The lifetime in seconds of a span such as `8h`; throws, saying what is accepted, otherwise. */
export function tokenLifetime(span: string): number {
  const match = /^(\d{1,7})\s*([smhd])$/.exec(span.trim());
  const seconds = match
    ? Number(match[1]) * (UNIT_SECONDS[match[2] as string] as number)
    : Number.NaN;
  if (!(seconds > 0) || seconds > MAX_TOKEN_DAYS * 86_400) {
    throw new Error(
      `--expires takes a number and s, m, h or d, from 1s to ${MAX_TOKEN_DAYS}d (got "${span}")`,
    );
  }
  return seconds;
}

/**
 * An HS256 token this server accepts, signed with AUTH_JWT_SECRET and carrying the configured
 * issuer, audience and claim names. For development: production tokens come from the
 * identity provider that holds the secret or the JWKS keys.
 */
export async function mintToken(auth: AuthConfig, request: TokenRequest): Promise<string> {
  if (auth.jwt?.kind !== 'secret') {
    throw new Error(
      auth.jwt
        ? 'AUTH_JWKS_URL is set: tokens come from the identity provider that holds its keys'
        : 'AUTH_JWT_SECRET is not set: without it the server needs no token (every caller is an administrator on loopback)',
    );
  }
  if (!request.user && !request.roles.includes('admin')) {
    throw new Error('give --user <db_user>, or --roles admin');
  }
  // The server accepts only what ownerFromClaim accepts: refuse to mint anything else.
  if (request.user !== undefined && ownerFromClaim(request.user) === null) {
    throw new Error(
      `--user must be an Oracle user name (a letter, then letters, digits, _, $ or #, at most 128), as the server requires of ${auth.userClaim} (got "${request.user}")`,
    );
  }
  const lifetime = tokenLifetime(request.expiresIn);
  const claims: Record<string, unknown> = { [auth.rolesClaim]: [...request.roles] };
  if (request.user) claims[auth.userClaim] = ownerFromClaim(request.user);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.user ?? 'admin')
    .setIssuedAt()
    .setExpirationTime(`${lifetime}s`);
  if (auth.issuer) jwt.setIssuer(auth.issuer);
  if (auth.audience) jwt.setAudience(auth.audience);
  return jwt.sign(new TextEncoder().encode(auth.jwt.secret));
}
