import { SignJWT } from 'jose';

/**
 * HS256 tokens for a test server started with `AUTH_JWT_SECRET: secret`: the subject is the
 * `db_user` claim (or `root`), valid for ten minutes.
 */
export function hs256Tokens(secret: string) {
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(claims.db_user ?? 'root'))
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(secret));
  const bearer = async (claims: Record<string, unknown>) => ({
    authorization: `Bearer ${await sign(claims)}`,
  });
  return { sign, bearer };
}
