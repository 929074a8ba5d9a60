package dev.headroom.enforcement.partition;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Callers that bypass a policy (issue 19, rules): a client whose address, as the front end's
 * {@link ClientAddressResolver} resolves it (trusted proxies and all), is in one of the CIDR
 * blocks, or who presents in {@link #header()} an API key whose SHA-256 is on the list
 * ({@link ApiKeys}: keys are never configured raw). A bypassed request is neither counted nor
 * refused by that policy. The one implementation the gateway ({@code allow} of a policy) and
 * every embedded front end (the servlet filter's {@code allow}, the starter's
 * {@code headroom.policies.NAME.allow.*}) use.
 *
 * <p>A key is read as {@link ApiKeys#presented(List)} reads it: exactly one field line of 1 to
 * {@value ApiKeys#MAX_KEY_LENGTH} visible characters; anything else is no key, so a caller
 * cannot bypass a policy by repeating the header or padding it. Immutable and thread-safe.
 */
public final class AllowList {
  /** The header an API key is read from unless another is named. */
  public static final String DEFAULT_HEADER = "X-Api-Key";

  /** Nobody bypasses the policy. */
  public static final AllowList NONE = new AllowList(List.of(), Set.of(), DEFAULT_HEADER);

  private final List<CidrRange> cidrs;
  private final Set<String> keyHashes;
  private final String header;

  private AllowList(List<CidrRange> cidrs, Set<String> keyHashes, String header) {
    this.cidrs = cidrs;
    this.keyHashes = keyHashes;
    this.header = header;
  }

  /**
   * An allow list.
   *
   * @param field the configuration path named in error messages, such as {@code policies.api.allow}
   * @param cidrs CIDR blocks or bare addresses, such as {@code 10.0.0.0/8} or {@code 2001:db8::1}
   * @param keyHashes SHA-256 hex digests of API keys ({@code printf %s "$KEY" | sha256sum})
   * @param header the request header the key is read from
   * @throws IllegalArgumentException naming the field, the value and what was expected
   */
  public static AllowList of(String field, Collection<String> cidrs, Collection<String> keyHashes, String header) {
    Objects.requireNonNull(field, "field");
    List<CidrRange> ranges = new ArrayList<>(cidrs.size());
    for (String c : cidrs) {
      try {
        ranges.add(CidrRange.parse(c));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(field + ".cidrs: " + e.getMessage(), e);
      }
    }
    Set<String> hashes = new LinkedHashSet<>();
    for (String k : keyHashes) {
      if (k == null || !ApiKeys.isSha256Hex(k.strip())) {
        throw new IllegalArgumentException(field + ".apiKeys: an entry of " + (k == null ? 0 : k.length())
            + " characters is not valid; expected the SHA-256 hex digest of a key (64 hex digits, "
            + "printf %s \"$KEY\" | sha256sum), never the key itself");
      }
      hashes.add(k.strip().toLowerCase(Locale.ROOT));
    }
    if (header == null || header.isBlank() || !header.chars().allMatch(AllowList::tchar)) {
      throw new IllegalArgumentException(field + ".header: '" + header + "' is not valid; expected a header name "
          + "such as " + DEFAULT_HEADER);
    }
    if (ranges.isEmpty() && hashes.isEmpty()) {
      return header.equals(DEFAULT_HEADER) ? NONE : new AllowList(List.of(), Set.of(), header);
    }
    return new AllowList(List.copyOf(ranges), Set.copyOf(hashes), header);
  }

  /** The CIDR blocks whose clients bypass the policy. */
  public List<CidrRange> cidrs() {
    return cidrs;
  }

  /** The lowercase SHA-256 hex digests of the API keys that bypass the policy. */
  public Set<String> keyHashes() {
    return keyHashes;
  }

  /** The request header an API key is read from. */
  public String header() {
    return header;
  }

  /** Whether nobody bypasses the policy. */
  public boolean isEmpty() {
    return cidrs.isEmpty() && keyHashes.isEmpty();
  }

  /**
   * Whether a caller bypasses the policy.
   *
   * @param clientAddress the client's address as the front end resolves it; empty when unknown
   * @param keyLines every field line of {@link #header()} in the request
   */
  public boolean bypasses(Optional<String> clientAddress, List<String> keyLines) {
    if (!cidrs.isEmpty() && clientAddress.isPresent()) {
      String a = clientAddress.get();
      for (CidrRange c : cidrs) {
        if (c.contains(a)) {
          return true;
        }
      }
    }
    if (!keyHashes.isEmpty() && !keyLines.isEmpty()) {
      Optional<String> hash = ApiKeys.presented(keyLines);
      return hash.isPresent() && keyHashes.contains(hash.get());
    }
    return false;
  }

  /** Whether a request bypasses the policy, its client address resolved by {@code addresses}. */
  public boolean bypasses(RequestView request, ClientAddressResolver addresses) {
    if (isEmpty()) {
      return false;
    }
    return bypasses(cidrs.isEmpty() ? Optional.empty() : addresses.resolve(request),
        keyHashes.isEmpty() ? List.of() : request.headers(header));
  }

  @Override
  public String toString() {
    return "AllowList{cidrs=" + cidrs + ", keys=" + keyHashes.size() + ", header=" + header + "}";
  }

  /** A token character of a header name (RFC 9110 section 5.6.2). */
  private static boolean tchar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }
}
