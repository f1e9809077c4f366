// The principal: who made the request (made from a verified token by security/authentication/principal.ts; carried by the request state).
import type { JWTPayload } from 'jose';

/** Who made the request, after the token verified. */
export interface Principal {
  /** `sub` (required: RFC 9068 §2.2 makes it mandatory in JWT access tokens). */
  readonly subject: string;
  /** `scope` (space-separated, RFC 8693 §4.2 / RFC 9068 §2.2.3) or `scp` (array or string, as some IdPs send it). */
  readonly scopes: string[];
  /** `client_id` (RFC 8693 §4.3, RFC 9068 §2.2), else `azp`. */
  readonly clientId?: string;
  /** `roles` (RFC 9068 §2.2.3.1), when it is an array of strings. */
  readonly roles?: string[];
  /** Every verified claim. */
  readonly claims: JWTPayload;
  /**
   * The raw token, for the token exchange (`subject_token`). Not enumerable: logging or serialising a
   * principal never writes it out.
   */
  readonly token: string;
  /** `exp` (required here: a token without an expiry would be valid forever). */
  readonly expiresAt: Date;
}
