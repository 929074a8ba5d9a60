package dev.headroom.vend.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * A span of time as the vend rate-limit extension writes it: {@code {"value": 1, "unit": "minute"}}
 * (seed 003, "Data (Response)": {@code window}, {@code resets_in}, {@code retry_after}).
 *
 * <p>{@link #of(Duration)} picks the largest of second, minute, hour and day that divides the
 * whole number of seconds exactly, as the seed's examples do: 60 s is {@code 1 minute}, 47 s is
 * {@code 47 second}, 90 s is {@code 90 second}, 7200 s is {@code 2 hour}, 86400 s is
 * {@code 1 day}. Zero is {@code 0 second}. Immutable.
 */
public final class VendDuration {

  /** The units of the extension, singular as the seed writes them. */
  public enum Unit {
    SECOND(1),
    MINUTE(60),
    HOUR(3600),
    DAY(86400);

    private final long seconds;

    Unit(long seconds) {
      this.seconds = seconds;
    }

    /** Seconds in one of this unit. */
    public long seconds() {
      return seconds;
    }

    /** The unit's name on the wire: {@code second}, {@code minute}, {@code hour}, {@code day}. */
    public String token() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The unit with the given wire name; the plural ({@code seconds}) is accepted too.
     *
     * @throws IllegalArgumentException naming the value and the accepted names
     */
    public static Unit fromToken(String token) {
      if (token != null) {
        String t = token.endsWith("s") ? token.substring(0, token.length() - 1) : token;
        for (Unit u : values()) {
          if (u.token().equals(t)) {
            return u;
          }
        }
      }
      throw new IllegalArgumentException("unit: expected second, minute, hour or day, got "
          + (token == null ? "null" : "\"" + VendJson.printable(token) + "\""));
    }
  }

  private final long value;
  private final Unit unit;

  private VendDuration(long value, Unit unit) {
    this.value = value;
    this.unit = unit;
  }

  /**
   * {@code value} of {@code unit}, as given.
   *
   * @throws IllegalArgumentException if value is negative or the unit is null
   */
  public static VendDuration of(long value, Unit unit) {
    if (value < 0) {
      throw new IllegalArgumentException("value: expected zero or more, got " + value);
    }
    return new VendDuration(value, Objects.requireNonNull(unit, "unit"));
  }

  /**
   * The duration rounded up to whole seconds, in the largest unit that divides it exactly.
   *
   * @throws IllegalArgumentException if the duration is negative
   */
  public static VendDuration of(Duration duration) {
    if (duration.isNegative()) {
      throw new IllegalArgumentException("duration: expected zero or more, got " + duration);
    }
    long seconds = duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    return ofSeconds(seconds);
  }

  /** Whole seconds in the largest unit that divides them exactly. */
  public static VendDuration ofSeconds(long seconds) {
    if (seconds < 0) {
      throw new IllegalArgumentException("seconds: expected zero or more, got " + seconds);
    }
    Unit best = Unit.SECOND;
    if (seconds > 0) {
      for (Unit u : Unit.values()) {
        if (seconds % u.seconds == 0) {
          best = u;
        }
      }
    }
    return new VendDuration(seconds / best.seconds, best);
  }

  /** Whole seconds in the unit {@code second}, whatever the amount (for {@code retry_after}). */
  public static VendDuration inSeconds(long seconds) {
    return of(seconds, Unit.SECOND);
  }

  /**
   * Reads {@code {"value": n, "unit": "..."}}.
   *
   * @param field the name of the field, for the error message
   * @throws IllegalArgumentException naming the field, the value and what is expected
   */
  public static VendDuration fromJson(String field, JsonNode node) {
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException(field + ": expected an object {\"value\": n, \"unit\": \"second\"}, got "
          + VendJson.describe(node));
    }
    JsonNode v = node.get("value");
    if (v == null || !v.canConvertToExactIntegral() || !v.canConvertToLong() || v.asLong() < 0) {
      throw new IllegalArgumentException(field + ".value: expected an integer of zero or more, got " + VendJson.describe(v));
    }
    JsonNode u = node.get("unit");
    if (u == null || !u.isTextual()) {
      throw new IllegalArgumentException(field + ".unit: expected second, minute, hour or day, got " + VendJson.describe(u));
    }
    Unit unit;
    try {
      unit = Unit.fromToken(u.textValue());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(field + "." + e.getMessage(), e);
    }
    return new VendDuration(v.asLong(), unit);
  }

  public long value() {
    return value;
  }

  public Unit unit() {
    return unit;
  }

  /** The span as a {@link Duration}; saturates at {@link Long#MAX_VALUE} seconds. */
  public Duration toDuration() {
    long s = value > Long.MAX_VALUE / unit.seconds ? Long.MAX_VALUE : value * unit.seconds;
    return Duration.ofSeconds(s);
  }

  /** {@code {"value": n, "unit": "..."}}. */
  public ObjectNode toJson() {
    ObjectNode o = VendJson.object();
    o.put("value", value);
    o.put("unit", unit.token());
    return o;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VendDuration && ((VendDuration) o).value == value && ((VendDuration) o).unit == unit;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(value) * 31 + unit.hashCode();
  }

  @Override
  public String toString() {
    return value + " " + unit.token();
  }
}
