package dev.headroom.conformance;

/**
 * What the application behind an adapter does for each route of the {@link SpecFixture}. An
 * adapter's test implements these in its own server (a servlet, a Spring controller, the gateway's
 * upstream) exactly as described; the specification relies on nothing else. A HEAD request to a
 * GET route is served as the GET, the content left out (RFC 9110 section 9.3.2).
 */
public enum SpecEndpoint {
  /** 200, {@code text/plain}, the body {@code ok}. */
  OK,
  /**
   * 200, {@code application/octet-stream}: as many bytes as the query parameter {@code n} says
   * (an ASCII {@code x} each), written through the response's output stream; through its character
   * writer (UTF-8) when the query also has {@code writer=true}. No Content-Length is set in advance.
   * With {@code discard=k} in the query, first writes {@code k} other bytes ({@code d}) and then
   * throws them away before writing the {@code n}: with {@code resetBuffer()} when the query has
   * {@code reset=buffer}, with {@code reset()} (every header too) when it has {@code reset=all};
   * the content type is set again after the reset.
   */
  BYTES,
  /**
   * Calls {@link RequestHold#enter()} on the request thread (which blocks until the test lets it go),
   * then 200 with the body {@code done}.
   */
  BLOCKING,
  /**
   * Starts asynchronous processing, returns the request thread to the container, and from another
   * thread calls {@link RequestHold#enter()}, then writes 200 {@code done} and completes the request.
   * Hosts without asynchronous processing treat it as {@link #BLOCKING}.
   */
  BLOCKING_ASYNC,
  /**
   * Answers with a redirect to {@code /spec/free} when the query says so: {@code to=send} through
   * the server's own redirect call ({@code sendRedirect}, 302); {@code to=status}, by setting the
   * status 303 and a {@code Location} field, with no content. Without {@code to}: 200 {@code ok}.
   */
  REDIRECT,
  /**
   * Answers with the status the query's {@code status} says (200 without it), {@code text/plain},
   * the body {@code ok}; with {@code charge=N} in the query, also the response header
   * {@link SpecFixture#CHARGE_HEADER}{@code : N} (the units the request cost, known once answered).
   */
  STATUS
}
