package dev.headroom.checker;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.headroom.http.headers.HeaderDialect;
import dev.headroom.http.headers.VendorDialect;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What {@code headroom check} concluded about a service: the validated Graceful Boundaries level,
 * the evidence for each requirement, the IETF RateLimit dialects it speaks, and every finding with
 * its specification section. Immutable.
 */
public final class Report {

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final URI target;
  private final Level level;
  private final String declared;
  private final Set<HeaderDialect> dialects;
  private final Set<VendorDialect> vendors;
  private final List<String> readings;
  private final List<Requirement> requirements;
  private final List<Finding> findings;
  private final int requests;

  Report(URI target, Level level, String declared, Set<HeaderDialect> dialects, Set<VendorDialect> vendors,
      List<String> readings, List<Requirement> requirements, List<Finding> findings, int requests) {
    this.target = target;
    this.level = level;
    this.declared = declared;
    this.dialects = dialects.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(dialects));
    this.vendors = vendors.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(vendors));
    this.readings = List.copyOf(readings);
    this.requirements = List.copyOf(requirements);
    this.findings = List.copyOf(findings);
    this.requests = requests;
  }

  public URI target() {
    return target;
  }

  /** The highest level whose requirements all passed. */
  public Level level() {
    return level;
  }

  /** The level the discovery document declares, as written ({@code level-3}, {@code none}, ...). */
  public Optional<String> declared() {
    return Optional.ofNullable(declared);
  }

  /** The RateLimit dialects seen on the service's responses. */
  public Set<HeaderDialect> dialects() {
    return dialects;
  }

  /** The vendors' own dialects seen (OpenAI's, GitHub's, ...), read beside the IETF ones. */
  public Set<VendorDialect> vendors() {
    return vendors;
  }

  /** What a client reads of each budget, from the last response that reported it. */
  public List<String> readings() {
    return readings;
  }

  public List<Requirement> requirements() {
    return requirements;
  }

  public List<Finding> findings() {
    return findings;
  }

  /** Findings of one severity. */
  public List<Finding> findings(Finding.Severity severity) {
    List<Finding> out = new ArrayList<>();
    for (Finding f : findings) {
      if (f.severity() == severity) {
        out.add(f);
      }
    }
    return out;
  }

  /** Requests sent to the service. */
  public int requests() {
    return requests;
  }

  /** The report as JSON, for machines. */
  public String toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("target", target.toString());
    m.put("level", level.label());
    m.put("declared", declared);
    List<String> d = new ArrayList<>();
    dialects.forEach(x -> d.add(x.token()));
    m.put("dialects", d);
    List<String> v = new ArrayList<>();
    vendors.forEach(x -> v.add(x.token()));
    m.put("vendorDialects", v);
    m.put("read", readings);
    List<Map<String, Object>> reqs = new ArrayList<>();
    for (Requirement r : requirements) {
      Map<String, Object> x = new LinkedHashMap<>();
      x.put("level", r.level().label());
      x.put("requirement", r.name());
      x.put("status", r.status().name());
      x.put("evidence", r.evidence());
      reqs.add(x);
    }
    m.put("requirements", reqs);
    List<Map<String, Object>> fs = new ArrayList<>();
    for (Finding f : findings) {
      Map<String, Object> x = new LinkedHashMap<>();
      x.put("severity", f.severity().name());
      x.put("rule", f.rule());
      x.put("reference", f.reference());
      x.put("where", f.where());
      x.put("message", f.message());
      fs.add(x);
    }
    m.put("findings", fs);
    m.put("requests", requests);
    try {
      return JSON.writeValueAsString(m);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings and lists always serialises", e);
    }
  }

  /** The report for people. */
  public String toText() {
    StringBuilder sb = new StringBuilder();
    sb.append("headroom check ").append(target).append('\n');
    sb.append("Graceful Boundaries level: ").append(level.label());
    if (declared != null) {
      sb.append(" (declared: ").append(declared).append(')');
    }
    sb.append('\n');
    sb.append("RateLimit dialects: ");
    if (dialects.isEmpty()) {
      sb.append("none seen");
    } else {
      List<String> d = new ArrayList<>();
      dialects.forEach(x -> d.add(x.token()));
      sb.append(String.join(", ", d));
    }
    sb.append('\n');
    if (!vendors.isEmpty()) {
      List<String> v = new ArrayList<>();
      vendors.forEach(x -> v.add(x.token() + " (" + x.vendor() + ")"));
      sb.append("Vendor dialects: ").append(String.join(", ", v)).append('\n');
    }
    if (!readings.isEmpty()) {
      sb.append("Read:\n");
      readings.forEach(r -> sb.append("  ").append(r).append('\n'));
    }
    sb.append("Requirements:\n");
    for (Requirement r : requirements) {
      sb.append("  [").append(r.status()).append("] level ").append(r.level().label()).append(": ").append(r.name()).append('\n');
      for (String e : r.evidence()) {
        sb.append("      ").append(e).append('\n');
      }
    }
    sb.append("Findings: ").append(findings(Finding.Severity.VIOLATION).size()).append(" violations, ")
        .append(findings(Finding.Severity.WARNING).size()).append(" warnings, ")
        .append(findings(Finding.Severity.NOTE).size()).append(" notes\n");
    for (Finding f : findings) {
      sb.append("  ").append(f).append('\n');
    }
    sb.append("Requests sent: ").append(requests).append('\n');
    return sb.toString();
  }

  @Override
  public String toString() {
    return toText();
  }
}
