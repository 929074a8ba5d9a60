package dev.headroom.http.body;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The bodies of the non-success responses a service answers itself, not because of a limit: the
 * store that could not decide, and the HTTP errors of a framework or container (404, 405, 500, ...).
 * Every front end sends these same texts (the gateway, the servlet filter, the Spring Boot
 * starter's error controller), so a caller sees one service whichever front end it reached.
 *
 * <h2>The store could not decide (draft-ietf-httpapi-ratelimit-headers-09 section 5.2)</h2>
 * A front end that refuses while its quotas cannot be checked answers 503 with the problem type
 * {@code temporary-reduced-capacity} and {@code Retry-After: }{@value #STORE_RETRY_AFTER_SECONDS}
 * (long enough for a store connection to come back, short enough to retry soon), or
 * {@value #OVERLOAD_RETRY_AFTER_SECONDS} when the front end's own queue to a healthy store is full.
 *
 * <h2>Framework errors (Graceful Boundaries section 6)</h2>
 * {@link #forStatus} gives every non-success status an {@code error} token, a {@code detail} that
 * names the request and a {@code why}, and on 405 the {@code allowedMethods} the caller may use
 * instead; it points at the discovery document where that helps the caller find its way.
 *
 * <p>Stateless.
 */
public final class ServiceErrors {
  private ServiceErrors() {}

  /** Retry-After of a 503 when the store cannot decide. */
  public static final long STORE_RETRY_AFTER_SECONDS = 2;

  /** Retry-After of a 503 when the front end's own queue to the store is full. */
  public static final long OVERLOAD_RETRY_AFTER_SECONDS = 1;

  /** Why a request is refused while its quota cannot be checked. */
  public static final String STORE_UNAVAILABLE_WHY =
      "Requests are not served when their quota cannot be checked, so that the service is never overrun.";

  /** The Retry-After of {@link #storeUnavailable}. */
  public static long storeRetryAfterSeconds(boolean overloaded) {
    return overloaded ? OVERLOAD_RETRY_AFTER_SECONDS : STORE_RETRY_AFTER_SECONDS;
  }

  /** The detail of {@link #storeUnavailable}, with its wait. */
  public static String storeUnavailableDetail(boolean overloaded) {
    long retry = storeRetryAfterSeconds(overloaded);
    return (overloaded ? "The service has more requests than it can check right now, so this one is not served."
        : "Quotas cannot be checked right now, so requests are not served.")
        + " Try again in " + LimitRefusals.seconds(retry) + ".";
  }

  /**
   * 503 temporary-reduced-capacity: the store could not decide, or ({@code overloaded}) the front
   * end's queue to it is full. The caller writes {@code Retry-After} as
   * {@link #storeRetryAfterSeconds}, the body's {@code retryAfterSeconds}.
   *
   * @param origin the service's origin, or null
   */
  public static Refusal storeUnavailable(boolean overloaded, URI origin) {
    ProblemType t = ProblemType.TEMPORARY_REDUCED_CAPACITY;
    return Refusal.builder(t.status()).type(t).error(t.error())
        .detail(storeUnavailableDetail(overloaded))
        .why(STORE_UNAVAILABLE_WHY)
        .retryAfterSeconds(storeRetryAfterSeconds(overloaded))
        .origin(origin)
        .build();
  }

  /**
   * The methods an {@code Allow} field names (RFC 9110 section 10.2.1), in its order; empty for
   * none or a null field.
   */
  public static List<String> allowedMethods(String allow) {
    List<String> methods = new ArrayList<>();
    if (allow != null) {
      for (String m : allow.split(",")) {
        if (!m.isBlank()) {
          methods.add(m.strip());
        }
      }
    }
    return methods;
  }

  /**
   * The body of a non-success status the framework or container answered (Graceful Boundaries
   * section 6): its {@code error}, a {@code detail} naming the request, a {@code why}.
   *
   * @param status 400 to 599
   * @param method the request's method, such as {@code GET}
   * @param path the request's path, as the caller sent it (printed bounded, without control characters)
   * @param allowedMethods for 405, the methods the resource accepts (from {@code Allow}); ignored otherwise
   * @param discoveryPath where the limits discovery document is served, or null when there is none
   * @throws IllegalArgumentException when the status is not 400 to 599, or a 405 has no allowed methods
   */
  public static Refusal forStatus(int status, String method, String path, List<String> allowedMethods,
      String discoveryPath) {
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("status: expected a non-success status from 400 to 599, got " + status);
    }
    String m = method == null || !method.matches("[A-Za-z]{1,16}") ? "?" : method;
    try {
      return forStatus(status, m, m + " " + OperatorTextChecks.printable(path == null ? "/" : path), path,
          allowedMethods, discoveryPath);
    } catch (IllegalArgumentException e) {
      // The caller's path is quoted in the detail; one the text checks refuse (SC-16, control
      // characters) is left out rather than fail the error response.
      return forStatus(status, m, "this " + m + " request", "this resource", allowedMethods, discoveryPath);
    }
  }

  private static Refusal forStatus(int status, String method, String request, String path, List<String> allowedMethods,
      String discoveryPath) {
    String where = discoveryPath == null ? "" : " The discovery document at " + discoveryPath + " lists the limited routes.";
    Refusal.Builder b = Refusal.builder(status);
    switch (status) {
      case 400 -> b.error("bad_request").detail("The request " + request + " could not be understood by the service.")
          .why("Only well-formed requests are processed, so that a malformed one is never taken for something else.")
          .expected("A request whose parameters and body follow the resource's documented format.");
      case 401 -> b.error("unauthorized").detail("The request " + request + " needs credentials the service can verify.")
          .why("The resource belongs to an account, so the service must know who is asking.");
      case 403 -> b.error("forbidden").detail("The credentials of " + request + " do not grant access to this resource.")
          .why("Each account reaches only the resources it was granted.");
      case 404 -> b.error("not_found").detail("No resource of this service answers " + request + ".")
          .why("The service answers only the paths it implements." + where);
      case 405 -> b.error("method_not_allowed")
          .detail("The resource " + OperatorTextChecks.printable(path == null ? "/" : path) + " accepts "
              + String.join(", ", allowedMethods == null ? List.of() : allowedMethods) + ", not " + method + ".")
          .why("Each resource accepts only the methods the service implements for it.")
          .allowedMethods(allowedMethods);
      case 406 -> b.error("not_acceptable").detail("The service cannot answer " + request + " in a media type the request accepts.")
          .why("The service answers in the media types it implements; Accept must allow one of them.");
      case 413 -> b.error("content_too_large").detail("The body of " + request + " is larger than the service accepts.")
          .why("Request bodies are bounded so that one caller cannot tie up the service with an unbounded upload.");
      case 415 -> b.error("unsupported_media_type").detail("The body of " + request + " is in a media type this resource does not read.")
          .why("Each resource reads only the media types it implements; Content-Type must name one of them.");
      case 500 -> b.error("internal_error").detail("The service failed while answering " + request + ". Try again later.")
          .why("An unexpected failure is reported, not hidden, so that the caller can retry or report it.");
      case 503 -> b.error("service_unavailable").detail("The service cannot answer " + request + " right now. Try again later.")
          .why("A service that cannot answer says so at once rather than leave the caller waiting.");
      default -> {
        String reason = ReasonPhrase.of(status);
        b.error(reason.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_|_$", ""))
            .detail("The service answered " + request + " with " + status + " " + reason + ".")
            .why(status < 500 ? "The request cannot be served as sent; the status says what to change."
                : "The service could not complete the request; the status says whether retrying can help.");
      }
    }
    return b.build();
  }
}
