package dev.headroom.enforcement;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A response the gate answers itself, whole: a refusal (429, 413, 503, 401, 400) or the discovery
 * document (200, 304). The front end sets the status, adds the fields in order, and writes the body
 * unless the request is HEAD. For a refusal ({@link #refusal()}) the request's own content is not
 * for the application: the front end reads and drops what little of it there is, or closes the
 * connection, so that the connection can carry the next request. Immutable.
 */
public final class GateResponse {
  private final int status;
  private final List<Map.Entry<String, String>> fields;
  private final String contentType;
  private final byte[] body;
  private final boolean refusal;
  /** What a refusal is metered as ({@link HeadroomMeters#PROBLEM}), and the policy that refused; null when not known. */
  private final String problem;
  private final String policy;

  GateResponse(int status, List<Map.Entry<String, String>> fields, String contentType, byte[] body, boolean refusal) {
    this(status, fields, contentType, body, refusal, null, null);
  }

  GateResponse(int status, List<Map.Entry<String, String>> fields, String contentType, byte[] body, boolean refusal,
      String problem, String policy) {
    this.problem = problem;
    this.policy = policy;
    this.status = status;
    this.fields = Collections.unmodifiableList(new ArrayList<>(fields));
    this.contentType = contentType;
    this.body = body;
    this.refusal = refusal;
  }

  /** The status code. */
  public int status() {
    return status;
  }

  /**
   * The header fields in order, each name once or (RateLimit fields of several dialects) more;
   * {@code Content-Type} and {@code Content-Length} excluded.
   */
  public List<Map.Entry<String, String>> fields() {
    return fields;
  }

  /** The media type of the body; empty for a body-less answer (304). */
  public Optional<String> contentType() {
    return Optional.ofNullable(contentType);
  }

  /** The body (empty for 304); a HEAD request is answered without it, with its length. */
  public byte[] body() {
    return body.clone();
  }

  /** The body's length, for {@code Content-Length}. */
  public int contentLength() {
    return body.length;
  }

  /** Whether this refuses the request (its unread content should be settled, see the class comment). */
  public boolean refusal() {
    return refusal;
  }

  /** The problem a refusal is metered as; null when it is not a refusal of a decision. */
  String problem() {
    return problem;
  }

  /** The policy that refused; null when not one policy's. */
  String policy() {
    return policy;
  }

  @Override
  public String toString() {
    return status + " " + fields + (contentType == null ? "" : " " + contentType + " (" + body.length + " bytes)");
  }
}
