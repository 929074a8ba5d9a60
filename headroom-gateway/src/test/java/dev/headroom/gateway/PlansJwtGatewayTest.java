package dev.headroom.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.headroom.ManualTicker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans from a JWT claim through the gateway: a valid token's plan is enforced, no token gets the
 * fallback plan, and a malformed, expired or foreign token gets 401 with a Graceful Boundaries body
 * ({@code error}, {@code detail}, {@code why}: section 6) and {@code WWW-Authenticate: Bearer}
 * (RFC 6750 section 3), never a 500 and never the plan it claims.
 */
class PlansJwtGatewayTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final byte[] HMAC = "0123456789abcdef0123456789abcdef".getBytes();
  @TempDir Path dir;
  TestUpstream upstream;
  Gateway gateway;
  RSAKey rsa;
  final HttpClient client = HttpClient.newHttpClient();
  /** The gateway's time, which a token's exp and nbf are read against. */
  final ManualTicker ticker = ManualTicker.atFixedInstant();

  @BeforeEach
  void start() throws Exception {
    rsa = new RSAKeyGenerator(2048).keyID("k1").generate();
    Path jwks = dir.resolve("jwks.json");
    Files.writeString(jwks, new JWKSet(rsa.toPublicJWK()).toString());
    upstream = new TestUpstream();
    gateway = start("{type: jwt, jwksFile: \"" + jwks.toString().replace("\\", "\\\\") + "\", audience: api.example.com}", 3);
  }

  @AfterEach
  void stop() {
    gateway.close();
    upstream.close();
  }

  /** A gateway whose plans are free (1 a minute) and pro ({@code proQuota}), resolved by {@code resolver}. */
  Gateway start(String resolver, int proQuota) throws Exception {
    String yaml = """
        service: {name: Jwt plans}
        listen: {host: 127.0.0.1, port: 0}
        admin: {enabled: false}
        upstreams:
          up: {url: "http://127.0.0.1:%d"}
        policies:
          api: {quota: 100, window: 1m, partition: client-ip, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /echo/**, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: %s
          catalog:
            free: {url: /pricing, policies: {api: {quota: 1}}}
            pro: {policies: {api: {quota: %d}}}
        """.formatted(upstream.port(), resolver, proQuota);
    return Gateway.builder(GatewayConfig.parse(yaml, "jwt.yaml")).ticker(ticker).start();
  }

  Instant now() {
    return Instant.ofEpochSecond(0, ticker.read());
  }

  String token(String plan, Instant exp, String audience) throws Exception {
    JWTClaimsSet c = new JWTClaimsSet.Builder().claim("plan", plan).audience(audience).expirationTime(Date.from(exp)).build();
    SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID("k1").build(), c);
    jwt.sign(new RSASSASigner(rsa));
    return jwt.serialize();
  }

  HttpResponse<String> get(String bearer) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.address().getPort() + "/echo/x"));
    if (bearer != null) {
      b.header("Authorization", "Bearer " + bearer);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aValidTokensPlanIsEnforcedAndNoTokenGetsTheFallback() throws Exception {
    HttpResponse<String> pro = get(token("pro", now().plusSeconds(300), "api.example.com"));
    assertThat(pro.statusCode()).isEqualTo(200);
    assertThat(pro.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=3");
    HttpResponse<String> anonymous = get(null);
    assertThat(anonymous.statusCode()).isEqualTo(200);
    assertThat(anonymous.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:free\";q=1");
  }

  @Test
  void badTokensGet401WithAGracefulBoundariesBody() throws Exception {
    Map<String, String> tokens = Map.of(
        "not a signed JWT", "garbage.token",
        "expired at", token("pro", now().minusSeconds(3600), "api.example.com"),
        "expected audience", token("pro", now().plusSeconds(300), "elsewhere"));
    for (Map.Entry<String, String> t : tokens.entrySet()) {
      HttpResponse<String> r = get(t.getValue());
      assertThat(r.statusCode()).as(t.getKey()).isEqualTo(401);
      assertThat(r.headers().firstValue("WWW-Authenticate").orElseThrow()).isEqualTo("Bearer error=\"invalid_token\"");
      JsonNode body = JSON.readTree(r.body());
      assertThat(body.path("error").asText()).isEqualTo("invalid_token");
      assertThat(body.path("detail").asText()).contains(t.getKey());
      assertThat(body.path("why").asText()).isNotBlank();
      assertThat(Schemas.REFUSAL.validate(body)).isEmpty();
      assertThat(r.body()).doesNotContain(t.getValue());
    }
  }

  @Test
  void aBadJwtSectionIsRefusedNamingTheField() {
    String yaml = """
        service: {name: Jwt plans}
        upstreams:
          up: {url: "http://127.0.0.1:9"}
        policies:
          api: {quota: 100, window: 1m, why: Limits keep the service available for everyone.}
        routes:
          - {method: GET, path: /x, upstream: up, policies: [api]}
        plans:
          fallback: free
          resolver: {type: jwt, keyEnv: SHORT_KEY, jwksUrl: "ftp://keys"}
          catalog:
            free: {policies: {api: {quota: 1}}}
        """;
    ConfigException e = catchThrowableOfType(() -> GatewayConfig.load(write(yaml), 1 << 20), ConfigException.class);
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.resolver.jwksUrl: \"ftp://keys\" is not valid; expected an https URL"));
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).startsWith("plans.resolver.keyEnv: the environment variable SHORT_KEY is not set"));
  }

  @Test
  void anHs256KeyFromAFileVerifiesTokens() throws Exception {
    Path key = dir.resolve("hs.key");
    Files.writeString(key, Base64.getEncoder().encodeToString(HMAC) + "\n");
    try (Gateway g = start("{type: jwt, keyFile: \"" + key.toString().replace("\\", "\\\\") + "\", claim: tier}", 7)) {
      SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), new JWTClaimsSet.Builder().claim("tier", "pro")
          .expirationTime(Date.from(now().plusSeconds(60))).build());
      jwt.sign(new MACSigner(HMAC));
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.address().getPort() + "/echo/x"))
          .header("Authorization", "Bearer " + jwt.serialize()).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.headers().firstValue("RateLimit-Policy").orElseThrow()).contains("\"api:pro\";q=7");
    }
  }

  Path write(String yaml) throws Exception {
    Path p = dir.resolve("c.yaml");
    Files.writeString(p, yaml);
    return p;
  }
}
