/**
 * Plan resolvers, the implementations of headroom-enforcement's
 * {@link dev.headroom.enforcement.plan.PlanResolver}: an API key file of SHA-256 hashes
 * ({@link dev.headroom.plans.ApiKeyFileResolver}), a claim of a signed JWT
 * ({@link dev.headroom.plans.JwtResolver}) and a SQL query ({@link dev.headroom.plans.SqlResolver}).
 * Nimbus JOSE+JWT, HikariCP and the PostgreSQL driver live here, so that no front end carries them
 * unless it resolves plans.
 *
 * <h2>How is this designed, and why?</h2>
 * <ul>
 * <li>{@link dev.headroom.plans.JwtResolver} verifies with Nimbus's verifiers per key type (RSASSA, ECDSA P-256,
 * Ed25519 through Tink, MAC) chosen by the token's {@code alg} and the JWKS entries matching its
 * header, rather than Nimbus's {@code DefaultJWTProcessor}: that processor's claims verifier reads
 * the wall clock itself, and its key factory does not take OKP (Ed25519) keys. {@code exp}
 * (required), {@code nbf}, {@code aud}, {@code iss} are checked against an injected {@code Clock}.
 * The gateway uses the system clock for it (its {@code Ticker} is monotonic, not wall-clock time).
 * <li>{@link dev.headroom.plans.SqlResolver} never blocks its caller: a cache hit answers at once; a miss joins the
 * query in flight for that key or goes to the resolver's own bounded executor (a full queue is
 * {@code Unavailable}), with a statement timeout, and the caller's copy of the answer is completed
 * {@code Unavailable} at the deadline while the query runs on to fill the cache. HikariCP starts
 * without connecting ({@code initializationFailTimeout -1}) so a database down at start is the
 * fallback plan, not a gateway that cannot start. Tests run against the machine's PostgreSQL;
 * "down" is a closed port and "slow" is {@code pg_sleep} in the query (the shared server is never
 * stopped).
 * </ul>
 *
 * <p>May use: headroom-enforcement ({@code .plan}, {@code .partition}), headroom-core, SLF4J, Nimbus
 * JOSE+JWT (with Tink for EdDSA), HikariCP and JDBC.
 */
package dev.headroom.plans;
