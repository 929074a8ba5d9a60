package dev.headroom.enforcement.settings;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One route of the settings model: the requests it matches (methods and a path template), the
 * policies decided for them and every rule of the route (shadow policies, costs stated by the
 * request or charged by the response, which responses count, per-policy method conditions, the
 * {@code pk} it sends, redirects, field rules, discovery, adaptive concurrency). {@link SettingsReader#routes} turns it
 * into headroom-enforcement's {@code RouteRules}, the one converter every binding shares: Spring
 * Boot's {@code headroom.routes[i].*}, Spring Cloud Gateway's {@code headroom.cloud-gateway.routes.ID.*}
 * and the gateway's YAML {@code routes}.
 *
 * <p>Mutable, for binders; a binding with other defaults sets them in a subclass's constructor.
 */
public class RouteSettings extends FieldRuleSettings {

  /** The path template (headroom-http's one grammar), such as /api/items/{id}; {id:regex} and * are one segment, a final ** any rest. */
  private String path;

  /** The methods, such as [GET, POST]; every method when empty. */
  private List<String> methods = new ArrayList<>();

  /** Names of policies, decided together for every matching request. */
  private List<String> policies = new ArrayList<>();

  /** Names of policies decided in shadow: counted, reported, logged, never refusing. */
  private List<String> shadowPolicies = new ArrayList<>();

  /** Whether the shadow policies' RateLimit fields are sent: as decided while one would allow, r=0 with t until it would allow when it would refuse; the request is served either way. */
  private boolean shadowFields = false;

  /** The RateLimit header dialects of this route; the binding's default when empty. */
  private List<String> dialects = new ArrayList<>();

  /** The endpoint key in the discovery document. */
  private String key;

  /** Additional context for the discovery document. */
  private String note;

  /** Whether the discovery document lists the route (Graceful Boundaries SC-4: leave internal routes out). */
  private boolean listed = true;

  /** What a request costs in units of the route's requests policies, 0 or more. */
  private Long cost = 1L;

  /** A request header stating the request's cost, a whole number from 0 to max-cost; otherwise 400. */
  private String costHeader;

  /** A response header stating units the request costs on top of its cost, known once the application has answered (a query's rows, a model's tokens), from 0 to max-cost; charged when the response completes. */
  private String chargeHeader;

  /** The largest cost cost-header or charge-header may state; required with either. */
  private Long maxCost;

  /** Which requests count in every policy of the route: all, failures (responses 400 and up) or successes (below 400). */
  private String counting = "all";

  /** Which requests count in one policy, by policy name: all, failures or successes, whatever counting says (a login route's per-account policy may count failures while its per-address one counts every attempt). */
  private Map<String, String> count = new LinkedHashMap<>();

  /** The methods a policy applies to, by policy name, such as a write quota on [POST, PUT] beside a route-wide one; requests of other methods are neither counted nor refused by it. */
  private Map<String, List<String>> when = new LinkedHashMap<>();

  /** What the route sends as pk in the ietf dialect, instead of the binding's default: off, hash (a predictable hash of the partition) or hmac (a keyed HMAC with pk-hmac-key). */
  private String pk;

  /** The base64 key (at least 32 bytes) of pk hmac. */
  private String pkHmacKey;

  /** Whether the route leaves its RateLimit fields off 3xx responses (draft-ietf-httpapi-ratelimit-headers-09 section 6), instead of the binding's default. */
  private Boolean omitOnRedirect;

  /** Adaptive concurrency: a concurrent-requests policy whose quota is learnt from the route's latency and failures; off when unset. */
  private AdaptiveSettings adaptive;

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public List<String> getMethods() {
    return methods;
  }

  public void setMethods(List<String> methods) {
    this.methods = methods;
  }

  public List<String> getPolicies() {
    return policies;
  }

  public void setPolicies(List<String> policies) {
    this.policies = policies;
  }

  public List<String> getShadowPolicies() {
    return shadowPolicies;
  }

  public void setShadowPolicies(List<String> shadowPolicies) {
    this.shadowPolicies = shadowPolicies;
  }

  public boolean isShadowFields() {
    return shadowFields;
  }

  public void setShadowFields(boolean shadowFields) {
    this.shadowFields = shadowFields;
  }

  public List<String> getDialects() {
    return dialects;
  }

  public void setDialects(List<String> dialects) {
    this.dialects = dialects;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public String getNote() {
    return note;
  }

  public void setNote(String note) {
    this.note = note;
  }

  public boolean isListed() {
    return listed;
  }

  public void setListed(boolean listed) {
    this.listed = listed;
  }

  public Long getCost() {
    return cost;
  }

  public void setCost(Long cost) {
    this.cost = cost;
  }

  public String getCostHeader() {
    return costHeader;
  }

  public void setCostHeader(String costHeader) {
    this.costHeader = costHeader;
  }

  public String getChargeHeader() {
    return chargeHeader;
  }

  public void setChargeHeader(String chargeHeader) {
    this.chargeHeader = chargeHeader;
  }

  public Long getMaxCost() {
    return maxCost;
  }

  public void setMaxCost(Long maxCost) {
    this.maxCost = maxCost;
  }

  public String getCounting() {
    return counting;
  }

  public void setCounting(String counting) {
    this.counting = counting;
  }

  public Map<String, String> getCount() {
    return count;
  }

  public void setCount(Map<String, String> count) {
    this.count = count;
  }

  public Map<String, List<String>> getWhen() {
    return when;
  }

  public void setWhen(Map<String, List<String>> when) {
    this.when = when;
  }

  public String getPk() {
    return pk;
  }

  public void setPk(String pk) {
    this.pk = pk;
  }

  public String getPkHmacKey() {
    return pkHmacKey;
  }

  public void setPkHmacKey(String pkHmacKey) {
    this.pkHmacKey = pkHmacKey;
  }

  public AdaptiveSettings getAdaptive() {
    return adaptive;
  }

  public void setAdaptive(AdaptiveSettings adaptive) {
    this.adaptive = adaptive;
  }

  public Boolean getOmitOnRedirect() {
    return omitOnRedirect;
  }

  public void setOmitOnRedirect(Boolean omitOnRedirect) {
    this.omitOnRedirect = omitOnRedirect;
  }
}
