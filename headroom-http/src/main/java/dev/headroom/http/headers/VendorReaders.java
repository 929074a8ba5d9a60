package dev.headroom.http.headers;

import java.util.List;

/**
 * The registry of vendor readers, in the order they are asked: readers of fields several vendors
 * share ({@code x-ratelimit-*}: Discord, GitHub, Atlassian) first, each recognising its own by a
 * field or value only it sends, so that the generic X-RateLimit reader (in {@link FieldParser})
 * reads what none of them claimed. A field claimed by one dialect is read by no other.
 */
final class VendorReaders {

  /** Every reader, most specific first. */
  static final List<VendorReader> ALL = List.of(new DiscordReader(), new GitHubReader(), new AtlassianReader(),
      new OpenAiReader(), new AnthropicReader(), new AzureResourceManagerReader(), new XRateLimitReader(),
      new KongReader(), new ShopifyReader());

  private VendorReaders() {}

  /** Asks every reader; a defect in one becomes an INTERNAL diagnostic and never affects the others. */
  static void read(VendorFields fields) {
    for (VendorReader reader : ALL) {
      fields.guarded(reader);
    }
  }
}
