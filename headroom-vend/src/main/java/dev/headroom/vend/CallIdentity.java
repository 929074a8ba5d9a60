package dev.headroom.vend;

import dev.headroom.vend.format.Scope;
import dev.headroom.vend.format.VendRequestReader;
import java.util.Optional;

/**
 * What the host knows about a call beyond its envelope: the {@code X-Vend-Caller} header, and the
 * authenticated user. Immutable.
 *
 * <p>The service scope counts per {@code context.caller}; the header is used only when the
 * envelope names no caller. The envelope wins because it is the protocol's own statement of the
 * caller (seed 003: "identified by context.caller"); {@code X-Vend-Caller} is a transport copy of
 * it for infrastructure that cannot read bodies (vend-notes.md, "HTTP transport"). Neither is
 * authenticated: a host that knows the calling service for certain should put that name in the
 * header and strip the envelope's, or limit by {@link Scope#USER}.
 */
public final class CallIdentity {

  private static final CallIdentity NONE = new CallIdentity(null, null);

  private final String callerHeader;
  private final String user;

  private CallIdentity(String callerHeader, String user) {
    this.callerHeader = callerHeader;
    this.user = user;
  }

  /** No header, no user. */
  public static CallIdentity none() {
    return NONE;
  }

  /**
   * The {@code X-Vend-Caller} header value and the authenticated user; either may be null (absent).
   * The header is checked when it is used (a bad one is an {@code INVALID_REQUEST}); the user comes
   * from the host and must be an identifier, not a credential.
   *
   * @throws IllegalArgumentException if the user is empty, longer than 256 characters or holds
   *     control characters
   */
  public static CallIdentity of(String callerHeader, String user) {
    if (user != null && !VendRequestReader.validCaller(user)) {
      throw new IllegalArgumentException("user: expected 1 to 256 printable characters identifying the "
          + "authenticated user, got " + (user.length() > 64 ? user.length() + " characters" : "\"" + user + "\""));
    }
    return new CallIdentity(callerHeader, user);
  }

  /** The raw {@code X-Vend-Caller} header value, as received. */
  public Optional<String> callerHeader() {
    return Optional.ofNullable(callerHeader);
  }

  /** The authenticated user. */
  public Optional<String> user() {
    return Optional.ofNullable(user);
  }

  @Override
  public String toString() {
    return "CallIdentity{callerHeader=" + callerHeader + ", user=" + user + "}";
  }
}
