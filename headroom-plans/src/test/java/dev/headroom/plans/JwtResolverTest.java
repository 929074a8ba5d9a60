package dev.headroom.plans;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.OctetKeyPairGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import dev.headroom.enforcement.partition.RequestView;
import dev.headroom.enforcement.plan.PlanResolution;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JWT resolver (RFC 7519, RFC 7515, RFC 6750 section 3.1): the plan claim of a token signed
 * with RS256, ES256, EdDSA or HS256, and a declared outcome for every bad token.
 */
class JwtResolverTest {
  static final Instant NOW = Instant.parse("2026-11-24T03:00:00Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  static RSAKey rsa;
  static ECKey ec;
  static OctetKeyPair ed;
  static final byte[] HMAC = Base64.getDecoder().decode("c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldC0xMjM0NQ==");
  @TempDir Path dir;

  @BeforeAll
  static void keys() throws Exception {
    rsa = new RSAKeyGenerator(2048).keyID("r1").generate();
    ec = new ECKeyGenerator(Curve.P_256).keyID("e1").generate();
    ed = new OctetKeyPairGenerator(Curve.Ed25519).keyID("d1").generate();
  }

  static JWKSet publicSet() {
    return new JWKSet(List.of(rsa.toPublicJWK(), ec.toPublicJWK(), ed.toPublicJWK()));
  }

  static JWTClaimsSet.Builder claims() {
    return new JWTClaimsSet.Builder().claim("plan", "pro").audience("api.example.com")
        .expirationTime(Date.from(NOW.plusSeconds(600)));
  }

  static String sign(JWSAlgorithm alg, String kid, JWSSigner signer, JWTClaimsSet claims) throws Exception {
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).type(JOSEObjectType.JWT).build(), claims);
    jwt.sign(signer);
    return jwt.serialize();
  }

  static String rs256(JWTClaimsSet c) throws Exception {
    return sign(JWSAlgorithm.RS256, "r1", new RSASSASigner(rsa), c);
  }

  JwtResolver resolver() {
    return JwtResolver.builder().jwks(publicSet()).hmacKey(HMAC).audience("api.example.com").clock(CLOCK).build();
  }

  static PlanResolution resolve(JwtResolver r, String authorization) {
    RequestView.Builder b = RequestView.builder();
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return r.resolve(b.build()).toCompletableFuture().join();
  }

  static String detail(PlanResolution r) {
    assertThat(r).isInstanceOf(PlanResolution.Rejected.class);
    PlanResolution.Rejected rej = (PlanResolution.Rejected) r;
    assertThat(rej.error()).isEqualTo("invalid_token");
    assertThat(rej.why()).isNotBlank();
    return rej.detail();
  }

  @Test
  void everyAcceptedAlgorithmGivesThePlanClaim() throws Exception {
    JwtResolver r = resolver();
    JWTClaimsSet c = claims().build();
    assertThat(resolve(r, "Bearer " + rs256(c))).isEqualTo(new PlanResolution.Named("pro"));
    assertThat(resolve(r, "Bearer " + sign(JWSAlgorithm.ES256, "e1", new ECDSASigner(ec), c)))
        .isEqualTo(new PlanResolution.Named("pro"));
    assertThat(resolve(r, "bearer " + sign(JWSAlgorithm.EdDSA, "d1", new Ed25519Signer(ed), c)))
        .isEqualTo(new PlanResolution.Named("pro"));
    assertThat(resolve(r, "Bearer " + sign(JWSAlgorithm.HS256, null, new MACSigner(HMAC), c)))
        .isEqualTo(new PlanResolution.Named("pro"));
  }

  @Test
  void noTokenOrNoClaimIsAnonymous() throws Exception {
    JwtResolver r = resolver();
    assertThat(resolve(r, null)).isEqualTo(PlanResolution.anonymous());
    assertThat(resolve(r, "Basic dXNlcjpwYXNz")).isEqualTo(PlanResolution.anonymous());
    JWTClaimsSet noPlan = new JWTClaimsSet.Builder().audience("api.example.com")
        .expirationTime(Date.from(NOW.plusSeconds(60))).build();
    assertThat(resolve(r, "Bearer " + rs256(noPlan))).isEqualTo(PlanResolution.anonymous());
  }

  @Test
  void eachBadTokenIsRejectedSayingWhy() throws Exception {
    JwtResolver r = resolver();
    assertThat(detail(resolve(r, "Bearer not.a.jwt"))).contains("not a signed JWT");
    assertThat(detail(resolve(r, "Bearer " + rs256(claims().expirationTime(Date.from(NOW.minusSeconds(31))).build()))))
        .contains("expired at 2026-11-24T02:59:29Z");
    // within the clock skew: still valid
    assertThat(resolve(r, "Bearer " + rs256(claims().expirationTime(Date.from(NOW.minusSeconds(29))).build())))
        .isEqualTo(new PlanResolution.Named("pro"));
    assertThat(detail(resolve(r, "Bearer " + rs256(claims().expirationTime(null).build())))).contains("no exp");
    assertThat(detail(resolve(r, "Bearer " + rs256(claims().notBeforeTime(Date.from(NOW.plusSeconds(300))).build()))))
        .contains("not valid before");
    assertThat(detail(resolve(r, "Bearer " + rs256(claims().audience("other").build())))).contains("expected audience 'api.example.com'");
    // signed by a key not in the set
    RSAKey stranger = new RSAKeyGenerator(2048).keyID("r1").generate();
    assertThat(detail(resolve(r, "Bearer " + sign(JWSAlgorithm.RS256, "r1", new RSASSASigner(stranger), claims().build()))))
        .contains("signature does not verify");
    // HS256 with another secret
    byte[] other = Arrays.copyOf(HMAC, HMAC.length);
    other[0] ^= 1;
    assertThat(detail(resolve(r, "Bearer " + sign(JWSAlgorithm.HS256, null, new MACSigner(other), claims().build()))))
        .contains("signature does not verify");
    // alg none: an unsecured JWT is no credential
    String none = Base64.getUrlEncoder().withoutPadding().encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8))
        + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(claims().build().toString().getBytes(StandardCharsets.UTF_8)) + ".";
    assertThat(detail(resolve(r, "Bearer " + none))).contains("not a signed JWT");
    assertThat(detail(resolve(r, "Bearer " + "a".repeat(JwtResolver.MAX_TOKEN_LENGTH + 1)))).contains("at most");
  }

  @Test
  void aTokenSignedWithAnAlgorithmNotConfiguredIsRejected() throws Exception {
    JwtResolver jwksOnly = JwtResolver.builder().jwks(publicSet()).clock(CLOCK).build();
    assertThat(detail(resolve(jwksOnly, "Bearer " + sign(JWSAlgorithm.HS256, null, new MACSigner(HMAC), claims().build()))))
        .contains("signed with HS256; expected one of");
  }

  @Test
  void aJwksFileAndAJwksUrlAreRead() throws Exception {
    Path file = dir.resolve("jwks.json");
    Files.writeString(file, publicSet().toString());
    JwtResolver fromFile = JwtResolver.builder().jwksFile(file).clock(CLOCK).claim("tier").build();
    assertThat(resolve(fromFile, "Bearer " + rs256(claims().claim("tier", "contract").build())))
        .isEqualTo(new PlanResolution.Named("contract"));

    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/jwks", ex -> {
      byte[] body = publicSet().toString().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    });
    server.start();
    try (JwtResolver fromUrl = JwtResolver.builder()
        .jwksUrl(new URL("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks")).clock(CLOCK).build()) {
      assertThat(resolve(fromUrl, "Bearer " + sign(JWSAlgorithm.ES256, "e1", new ECDSASigner(ec), claims().build())))
          .isEqualTo(new PlanResolution.Named("pro"));
    } finally {
      server.stop(0);
    }
  }

  @Test
  void aJwksUrlThatCannotBeReadIsUnavailableSoTheFallbackApplies() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    try (JwtResolver down = JwtResolver.builder().jwksUrl(new URL("http://127.0.0.1:" + closed + "/jwks")).clock(CLOCK).build()) {
      assertThat(resolve(down, "Bearer " + rs256(claims().build()))).isInstanceOf(PlanResolution.Unavailable.class);
    }
  }

  @Test
  void badSettingsAreRefusedNamingThem() {
    assertThatThrownBy(() -> JwtResolver.builder().build()).hasMessageStartingWith("keys: expected a JWKS");
    assertThatThrownBy(() -> JwtResolver.builder().hmacKey(new byte[16]).build())
        .hasMessage("hmacKey: 16 bytes; expected at least 32 (RFC 7518 section 3.2)");
    assertThatThrownBy(() -> JwtResolver.builder().jwksFile(dir.resolve("none.json")).build())
        .hasMessageStartingWith("jwksFile: ").hasMessageContaining("none.json");
  }

  @Test
  void timeIsTheInjectedClock() throws Exception {
    String token = rs256(claims().expirationTime(Date.from(NOW.plusSeconds(60))).build());
    JwtResolver later = JwtResolver.builder().jwks(publicSet()).clock(Clock.offset(CLOCK, Duration.ofMinutes(2))).build();
    assertThat(detail(resolve(later, "Bearer " + token))).contains("expired");
  }
}
