package dev.headroom.plans;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import dev.headroom.enforcement.plan.PlanResolver;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * Plans from a claim of a signed JWT (RFC 7519) in {@code Authorization: Bearer} (RFC 6750),
 * verified with Nimbus JOSE+JWT: {@code RS256}, {@code ES256} and {@code EdDSA} (Ed25519) against
 * a JWKS (a file, or a URL fetched and cached by Nimbus), {@code HS256} against a shared key of at
 * least 32 bytes. The claim is {@code plan} unless configured otherwise.
 *
 * <p>What each request gets:
 * <ul>
 *   <li>no {@code Authorization} field, or another scheme: {@link PlanResolution#anonymous()
 *       anonymous} (the fallback plan);
 *   <li>a token that is not a compact JWS, uses another algorithm (such as {@code none}), does not
 *       verify against the keys, has no {@code exp} or has expired, is not yet valid ({@code nbf}),
 *       is for another audience or issuer: {@link PlanResolution.Rejected} with
 *       {@code invalid_token} (RFC 6750 section 3.1) and a detail that says which, never quoting
 *       the token;
 *   <li>a valid token: its claim as the plan name; a valid token without the claim (or not a
 *       string): anonymous;
 *   <li>the JWKS URL cannot be read: {@link PlanResolution.Unavailable} (the fallback plan).
 * </ul>
 *
 * <p>Time is the injected {@link Clock} ({@code exp} and {@code nbf} are wall-clock instants),
 * with a tolerance for clock skew (30 s by default). With local keys a token is verified on the
 * calling thread (CPU only); with a JWKS URL on one daemon thread of the resolver's own, since a
 * key fetch blocks. Thread-safe.
 */
public final class JwtResolver implements PlanResolver {
  /** The claim read unless {@link Builder#claim} says otherwise. */
  public static final String DEFAULT_CLAIM = "plan";
  /** The tolerance on {@code exp} and {@code nbf} unless {@link Builder#clockSkew} says otherwise. */
  public static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(30);
  /** Longest {@code Authorization} value read; a longer one is rejected unread. */
  public static final int MAX_TOKEN_LENGTH = 8192;
  /** Shortest HS256 key accepted (RFC 7518 section 3.2: a key of the hash's size). */
  public static final int MIN_HMAC_KEY_BYTES = 32;

  static final String WHY = "The plan of a request is read from its signed token, so a token that cannot "
      + "be verified cannot say which limits apply.";

  private final JWKSource<SecurityContext> jwks;
  private final byte[] hmacKey;
  private final boolean remote;
  private final String claim;
  private final String audience;
  private final String issuer;
  private final Clock clock;
  private final Duration skew;
  private final Set<JWSAlgorithm> algorithms;
  private final ExecutorService executor;

  private JwtResolver(Builder b, JWKSource<SecurityContext> jwks) {
    this.jwks = jwks;
    this.hmacKey = b.hmacKey == null ? null : b.hmacKey.clone();
    this.remote = b.jwksUrl != null;
    this.claim = b.claim;
    this.audience = b.audience;
    this.issuer = b.issuer;
    this.clock = b.clock;
    this.skew = b.clockSkew;
    Set<JWSAlgorithm> algs = new LinkedHashSet<>();
    if (jwks != null) {
      algs.addAll(List.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256, JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519));
    }
    if (hmacKey != null) {
      algs.add(JWSAlgorithm.HS256);
    }
    this.algorithms = Set.copyOf(algs);
    this.executor = remote ? Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "headroom-jwks");
      t.setDaemon(true);
      return t;
    }) : null;
  }

  /** Starts a resolver; at least one of a JWKS (file or URL) and an HMAC key is required. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public CompletionStage<PlanResolution> resolve(RequestView request) {
    List<String> auth = request.headers("Authorization");
    if (auth.size() != 1) {
      return CompletableFuture.completedFuture(auth.isEmpty() ? PlanResolution.anonymous()
          : rejected("The request carries " + auth.size() + " Authorization fields; expected one."));
    }
    String v = auth.get(0).strip();
    if (v.length() < 7 || !v.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
      return CompletableFuture.completedFuture(PlanResolution.anonymous());
    }
    String token = v.substring(7).strip();
    if (token.length() > MAX_TOKEN_LENGTH) {
      return CompletableFuture.completedFuture(rejected("The bearer token is " + token.length()
          + " characters long; expected at most " + MAX_TOKEN_LENGTH + "."));
    }
    if (!remote) {
      return CompletableFuture.completedFuture(verify(token));
    }
    try {
      return CompletableFuture.supplyAsync(() -> verify(token), executor);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(new PlanResolution.Unavailable("the JWT resolver is closed"));
    }
  }

  /** Verifies {@code token} and reads its plan claim; see the class comment for each outcome. */
  PlanResolution verify(String token) {
    SignedJWT jwt;
    try {
      jwt = SignedJWT.parse(token);
    } catch (ParseException e) {
      return rejected("The bearer token is not a signed JWT (compact JWS serialization, RFC 7515 section 7.1).");
    }
    JWSHeader header = jwt.getHeader();
    JWSAlgorithm alg = header.getAlgorithm();
    if (!algorithms.contains(alg)) {
      return rejected("The bearer token is signed with " + printable(alg.getName()) + "; expected one of "
          + algorithms.stream().map(JWSAlgorithm::getName).sorted().toList() + ".");
    }
    List<JWSVerifier> verifiers;
    try {
      verifiers = verifiers(header);
    } catch (KeySourceException e) {
      return new PlanResolution.Unavailable("the JWKS could not be read: " + e.getMessage());
    } catch (JOSEException e) {
      return rejected("The bearer token's key cannot verify it: " + e.getMessage());
    }
    boolean verified = false;
    for (JWSVerifier v : verifiers) {
      try {
        if (jwt.verify(v)) {
          verified = true;
          break;
        }
      } catch (JOSEException | IllegalStateException e) {
        // another key may verify it
      }
    }
    if (!verified) {
      return rejected(verifiers.isEmpty()
          ? "No configured key matches the bearer token's header (alg " + alg.getName()
              + (header.getKeyID() == null ? "" : ", kid " + printable(header.getKeyID())) + ")."
          : "The bearer token's signature does not verify against the configured keys.");
    }
    JWTClaimsSet claims;
    try {
      claims = jwt.getJWTClaimsSet();
    } catch (ParseException e) {
      return rejected("The bearer token's payload is not a JSON claims set (RFC 7519 section 7.2).");
    }
    PlanResolution bad = checkClaims(claims);
    if (bad != null) {
      return bad;
    }
    Object plan = claims.getClaim(claim);
    return plan instanceof String s && !s.isEmpty() ? new PlanResolution.Named(s) : PlanResolution.anonymous();
  }

  /** exp (required), nbf, aud and iss (RFC 7519 section 4.1), against the injected clock. */
  private PlanResolution checkClaims(JWTClaimsSet claims) {
    Instant now = clock.instant();
    Date exp = claims.getExpirationTime();
    if (exp == null) {
      return rejected("The bearer token has no exp claim; expected an expiry (RFC 7519 section 4.1.4).");
    }
    if (!now.isBefore(exp.toInstant().plus(skew))) {
      return rejected("The bearer token expired at " + exp.toInstant() + ".");
    }
    Date nbf = claims.getNotBeforeTime();
    if (nbf != null && now.isBefore(nbf.toInstant().minus(skew))) {
      return rejected("The bearer token is not valid before " + nbf.toInstant() + ".");
    }
    if (audience != null && (claims.getAudience() == null || !claims.getAudience().contains(audience))) {
      return rejected("The bearer token is not for this service; expected audience '" + audience + "'.");
    }
    if (issuer != null && !issuer.equals(claims.getIssuer())) {
      return rejected("The bearer token is not from the expected issuer '" + issuer + "'.");
    }
    return null;
  }

  /** A verifier for each key that matches the header (kid, alg, key type and curve). */
  private List<JWSVerifier> verifiers(JWSHeader header) throws JOSEException {
    List<JWSVerifier> out = new ArrayList<>();
    if (JWSAlgorithm.HS256.equals(header.getAlgorithm())) {
      out.add(new MACVerifier(hmacKey));
      return out;
    }
    JWKMatcher matcher = JWKMatcher.forJWSHeader(header);
    if (matcher == null) {
      return out;
    }
    for (JWK k : jwks.get(new JWKSelector(matcher), null)) {
      if (k instanceof RSAKey rsa && JWSAlgorithm.RS256.equals(header.getAlgorithm())) {
        out.add(new RSASSAVerifier(rsa));
      } else if (k instanceof ECKey ec && Curve.P_256.equals(ec.getCurve())) {
        out.add(new ECDSAVerifier(ec));
      } else if (k instanceof OctetKeyPair okp && Curve.Ed25519.equals(okp.getCurve())) {
        out.add(new Ed25519Verifier(okp.toPublicJWK()));
      }
    }
    return out;
  }

  private static PlanResolution rejected(String detail) {
    return new PlanResolution.Rejected("invalid_token", detail, WHY);
  }

  private static String printable(String s) {
    String cut = s.length() > 32 ? s.substring(0, 32) + "..." : s;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }

  @Override
  public void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  /** Builds a {@link JwtResolver}. */
  public static final class Builder {
    private Path jwksFile;
    private URL jwksUrl;
    private JWKSet jwkSet;
    private byte[] hmacKey;
    private String claim = DEFAULT_CLAIM;
    private String audience;
    private String issuer;
    private Clock clock = Clock.systemUTC();
    private Duration clockSkew = DEFAULT_CLOCK_SKEW;

    private Builder() {}

    /** A JWKS file (RFC 7517 section 5), read once when the resolver is built. */
    public Builder jwksFile(Path file) {
      this.jwksFile = file;
      return this;
    }

    /** A JWKS URL, fetched and cached by Nimbus ({@link JWKSourceBuilder}: 5 min, refreshed ahead). */
    public Builder jwksUrl(URL url) {
      this.jwksUrl = url;
      return this;
    }

    /** A JWKS in memory. */
    public Builder jwks(JWKSet set) {
      this.jwkSet = set;
      return this;
    }

    /** The HS256 key, at least {@value #MIN_HMAC_KEY_BYTES} bytes. */
    public Builder hmacKey(byte[] key) {
      this.hmacKey = key.clone();
      return this;
    }

    /** The claim naming the plan; {@value #DEFAULT_CLAIM} by default. */
    public Builder claim(String claim) {
      this.claim = Objects.requireNonNull(claim, "claim");
      return this;
    }

    /** The audience a token must name in {@code aud}; none checked by default. */
    public Builder audience(String audience) {
      this.audience = audience;
      return this;
    }

    /** The issuer a token must name in {@code iss}; none checked by default. */
    public Builder issuer(String issuer) {
      this.issuer = issuer;
      return this;
    }

    /** The clock {@code exp} and {@code nbf} are read against; for tests. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Tolerance on {@code exp} and {@code nbf}, 0 to 5 minutes; 30 s by default. */
    public Builder clockSkew(Duration skew) {
      this.clockSkew = Objects.requireNonNull(skew, "clockSkew");
      return this;
    }

    /**
     * Reads the keys and builds.
     *
     * @throws IllegalArgumentException naming the setting, the value and what was expected
     */
    public JwtResolver build() {
      int sources = (jwksFile == null ? 0 : 1) + (jwksUrl == null ? 0 : 1) + (jwkSet == null ? 0 : 1);
      if (sources > 1) {
        throw new IllegalArgumentException("jwks: expected one of a JWKS file, a JWKS URL or a JWKS, got " + sources);
      }
      if (sources == 0 && hmacKey == null) {
        throw new IllegalArgumentException("keys: expected a JWKS (file or URL) or an HS256 key, got neither");
      }
      if (hmacKey != null && hmacKey.length < MIN_HMAC_KEY_BYTES) {
        throw new IllegalArgumentException("hmacKey: " + hmacKey.length + " bytes; expected at least "
            + MIN_HMAC_KEY_BYTES + " (RFC 7518 section 3.2)");
      }
      if (claim.isBlank()) {
        throw new IllegalArgumentException("claim: expected a claim name, got an empty one");
      }
      if (clockSkew.isNegative() || clockSkew.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new IllegalArgumentException("clockSkew: " + clockSkew + "; expected 0 to 5 minutes");
      }
      JWKSource<SecurityContext> source = null;
      if (jwksFile != null) {
        try {
          source = new ImmutableJWKSet<>(JWKSet.load(jwksFile.toFile()));
        } catch (IOException | ParseException e) {
          throw new IllegalArgumentException("jwksFile: " + jwksFile + " cannot be read as a JWKS (" + e.getMessage()
              + "); expected a JSON Web Key Set (RFC 7517 section 5)", e);
        }
      } else if (jwkSet != null) {
        source = new ImmutableJWKSet<>(jwkSet);
      } else if (jwksUrl != null) {
        source = JWKSourceBuilder.<SecurityContext>create(jwksUrl).retrying(true).build();
      }
      return new JwtResolver(this, source);
    }
  }
}
