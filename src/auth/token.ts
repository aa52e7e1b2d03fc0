import { SignJWT } from 'jose';
import type { AuthConfig } from '../config.js';

export interface TokenRequest {
  /** The database owner the caller acts as (AUTH_USER_CLAIM); optional for an admin. */
  readonly user?: string | undefined;
  readonly roles: readonly string[];
  /** A jose time span such as `8h` or `30m`. */
  readonly expiresIn: string;
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
  const claims: Record<string, unknown> = { [auth.rolesClaim]: [...request.roles] };
  if (request.user) claims[auth.userClaim] = request.user.toUpperCase();
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(request.user ?? 'admin')
    .setIssuedAt()
    .setExpirationTime(request.expiresIn);
  if (auth.issuer) jwt.setIssuer(auth.issuer);
  if (auth.audience) jwt.setAudience(auth.audience);
  return jwt.sign(new TextEncoder().encode(auth.jwt.secret));
}
