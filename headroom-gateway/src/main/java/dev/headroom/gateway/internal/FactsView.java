package dev.headroom.gateway.internal;

import dev.headroom.gateway.internal.HttpVocabulary.RequestFacts;
import dev.headroom.enforcement.partition.RequestView;
import java.util.List;
import java.util.Optional;

/**
 * A Netty request seen through headroom-http's {@link RequestView}, noting whether anything but
 * the peer's address was read.
 */
final class FactsView implements RequestView {
  private final RequestFacts facts;
  boolean readOther;

  FactsView(RequestFacts facts) {
    this.facts = facts;
  }

  @Override
  public Optional<String> remoteAddress() {
    return facts.peer() == null ? Optional.empty() : Optional.of(facts.peer().getHostAddress());
  }

  @Override
  public String method() {
    readOther = true;
    return facts.method();
  }

  @Override
  public String path() {
    readOther = true;
    return facts.path();
  }

  @Override
  public Optional<String> route() {
    readOther = true;
    return Optional.ofNullable(facts.routeTemplate());
  }

  @Override
  public List<String> headers(String name) {
    readOther = true;
    return facts.headers().getAll(name);
  }

  @Override
  public Optional<String> user() {
    readOther = true;
    return Optional.empty();
  }
}
