package dev.headroom.enforcement.settings;

import dev.headroom.enforcement.partition.AllowList;
import java.util.ArrayList;
import java.util.List;

/** Callers that bypass a policy: neither counted nor refused by it (headroom-http {@link AllowList}). */
public class AllowSettings {
  /**
   * Client addresses that bypass the policy, as CIDR blocks or bare addresses (10.0.0.0/8,
   * 2001:db8::/32), matched against the client address as the trusted proxies resolve it.
   */
  private List<String> cidrs = new ArrayList<>();

  /**
   * API keys that bypass the policy, as the SHA-256 hex digest of each key (printf %s "$KEY" |
   * sha256sum), never the key itself; the key is read from {@code header}.
   */
  private List<String> apiKeys = new ArrayList<>();

  /** The request header an allowed API key is read from. */
  private String header = AllowList.DEFAULT_HEADER;

  public List<String> getCidrs() {
    return cidrs;
  }

  public void setCidrs(List<String> cidrs) {
    this.cidrs = cidrs;
  }

  public List<String> getApiKeys() {
    return apiKeys;
  }

  public void setApiKeys(List<String> apiKeys) {
    this.apiKeys = apiKeys;
  }

  public String getHeader() {
    return header;
  }

  public void setHeader(String header) {
    this.header = header;
  }
}
