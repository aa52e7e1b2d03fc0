import { SignJWT } from 'jose';

export interface TokenOptions {
  /** `sub`; the `db_user` claim (or `root`) when absent. */
  readonly subject?: string;
  /** `aud`, for a server started with AUTH_JWT_AUDIENCE. */
  readonly audience?: string;
  /** `exp`: a span from now as jose reads it ('5m'), or epoch seconds; ten minutes by default. */
  readonly expires?: string | number;
  /** Adds `iat`. */
  readonly issuedAt?: boolean;
}

/**
 * HS256 tokens for a test server started with `AUTH_JWT_SECRET: secret`, signed with these
 * defaults (each token may override them): the test's own tokens, without a JWT library in
 * every test file.
 */
export function hs256Tokens(secret: string, defaults: TokenOptions = {}) {
  const key = new TextEncoder().encode(secret);
  const sign = (claims: Record<string, unknown>, options: TokenOptions = {}) => {
    const { subject, audience, expires, issuedAt } = { ...defaults, ...options };
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(subject ?? String(claims.db_user ?? 'root'))
      .setExpirationTime(expires ?? '10m');
    if (audience !== undefined) jwt.setAudience(audience);
    if (issuedAt) jwt.setIssuedAt();
    return jwt.sign(key);
  };
  const bearer = async (claims: Record<string, unknown>, options?: TokenOptions) => ({
    authorization: `Bearer ${await sign(claims, options)}`,
  });
  return { sign, bearer };
}
