package dev.headroom.http.sf;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.greenbytes.http.sfv.BooleanItem;
import org.greenbytes.http.sfv.ByteSequenceItem;
import org.greenbytes.http.sfv.DecimalItem;
import org.greenbytes.http.sfv.Dictionary;
import org.greenbytes.http.sfv.InnerList;
import org.greenbytes.http.sfv.IntegerItem;
import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ListElement;
import org.greenbytes.http.sfv.OuterList;
import org.greenbytes.http.sfv.Parameters;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;
import org.greenbytes.http.sfv.TokenItem;
import org.greenbytes.http.sfv.Type;

/**
 * Headroom's Structured Fields codec (RFC 8941, RFC 9651 sections 3 and 4): parsing is the
 * {@code org.greenbytes.http:structured-fields} parser behind input bounds, serialisation is this
 * class's own walk over the library's values.
 *
 * <p>Why not the library's {@code serialize()}: in version 0.4 it prints a Decimal's fractional
 * part without its leading zeros ({@code 0.002} becomes {@code 0.2}) and truncates instead of
 * rounding half to even (RFC 9651 section 4.1.5). Everything else is the library's, and the HTTP WG
 * test vectors run against exactly this pairing ({@code StructuredFieldVectorsTest}).
 *
 * <p>Why the bounds: the library allocates a buffer the size of the remaining input for every
 * String, Token and Byte Sequence it reads, so an unbounded field with many tiny members costs
 * quadratic memory traffic. {@link #parseList}, {@link #parseDictionary} and {@link #parseItem}
 * refuse input larger than {@link #MAX_FIELD_CHARS}, split over more than {@link #MAX_FIELD_LINES}
 * lines, or with more separators than {@link #MAX_SEPARATORS}, before the library sees it.
 *
 * <p>Stateless and thread-safe.
 */
public final class StructuredFields {

  /** Longest field value accepted for parsing, all lines together (HTTP servers commonly cap a header at 8 KiB). */
  public static final int MAX_FIELD_CHARS = 4096;

  /** Most field lines accepted for one field name. */
  public static final int MAX_FIELD_LINES = 16;

  /** Most {@code ,} and {@code ;} separators accepted in one field: bounds members and parameters. */
  public static final int MAX_SEPARATORS = 256;

  /** The input exceeds {@link #MAX_FIELD_CHARS}, {@link #MAX_FIELD_LINES} or {@link #MAX_SEPARATORS}. */
  public static final class FieldTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    FieldTooLargeException(String message) {
      super(message);
    }
  }

  private static final Base64.Encoder BASE64 = Base64.getEncoder();

  private StructuredFields() {}

  /**
   * Parses field lines as a List (RFC 9651 section 4.2.1).
   *
   * @throws IllegalArgumentException when the input is not a valid List or exceeds the bounds
   */
  public static OuterList parseList(List<String> lines) {
    checkBounds(lines);
    return new Parser(lines).parseList();
  }

  /**
   * Parses field lines as a Dictionary (RFC 9651 section 4.2.2).
   *
   * @throws IllegalArgumentException when the input is not a valid Dictionary or exceeds the bounds
   */
  public static Dictionary parseDictionary(List<String> lines) {
    checkBounds(lines);
    return new Parser(lines).parseDictionary();
  }

  /**
   * Parses field lines as an Item (RFC 9651 section 4.2.3).
   *
   * @throws IllegalArgumentException when the input is not a valid Item or exceeds the bounds
   */
  public static Item<?> parseItem(List<String> lines) {
    checkBounds(lines);
    return new Parser(lines).parseItem();
  }

  private static void checkBounds(List<String> lines) {
    if (lines.isEmpty()) {
      throw new FieldTooLargeException("field: expected at least one field line, got none");
    }
    if (lines.size() > MAX_FIELD_LINES) {
      throw new FieldTooLargeException("field: expected at most " + MAX_FIELD_LINES + " field lines, got " + lines.size());
    }
    long chars = 0;
    int separators = 0;
    for (String line : lines) {
      chars += line.length() + 1;
      if (chars > MAX_FIELD_CHARS) {
        throw new FieldTooLargeException("field: expected at most " + MAX_FIELD_CHARS + " characters, got more");
      }
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        if ((c == ',' || c == ';') && ++separators > MAX_SEPARATORS) {
          throw new FieldTooLargeException("field: expected at most " + MAX_SEPARATORS
              + " list members and parameters, got more");
        }
      }
    }
  }

  /**
   * Serialises a List, Dictionary or Item (RFC 9651 section 4.1). An empty List or Dictionary
   * serialises to the empty string (the field is then omitted).
   *
   * @throws IllegalArgumentException when the value cannot be serialised
   */
  public static String serialise(Type<?> value) {
    StringBuilder sb = new StringBuilder(32);
    if (value instanceof OuterList) {
      String sep = "";
      for (ListElement<?> member : ((OuterList) value).get()) {
        sb.append(sep);
        sep = ", ";
        appendMember(sb, member);
      }
    } else if (value instanceof Dictionary) {
      String sep = "";
      for (Map.Entry<String, ListElement<?>> e : ((Dictionary) value).get().entrySet()) {
        sb.append(sep).append(e.getKey());
        sep = ", ";
        ListElement<?> member = e.getValue();
        if (member instanceof BooleanItem && Boolean.TRUE.equals(member.get())) {
          appendParameters(sb, member.getParams());
        } else {
          sb.append('=');
          appendMember(sb, member);
        }
      }
    } else if (value instanceof Item) {
      appendItem(sb, (Item<?>) value);
    } else {
      throw new IllegalArgumentException("value: expected a List, Dictionary or Item, got " + value);
    }
    return sb.toString();
  }

  private static void appendMember(StringBuilder sb, ListElement<?> member) {
    if (member instanceof InnerList) {
      sb.append('(');
      String sep = "";
      for (Item<?> item : ((InnerList) member).get()) {
        sb.append(sep);
        sep = " ";
        appendItem(sb, item);
      }
      sb.append(')');
      appendParameters(sb, member.getParams());
    } else {
      appendItem(sb, (Item<?>) member);
    }
  }

  private static void appendItem(StringBuilder sb, Item<?> item) {
    appendBareItem(sb, item);
    appendParameters(sb, item.getParams());
  }

  private static void appendParameters(StringBuilder sb, Parameters params) {
    for (Map.Entry<String, Item<?>> e : params.entrySet()) {
      sb.append(';').append(e.getKey());
      Item<?> v = e.getValue();
      if (!(v instanceof BooleanItem && Boolean.TRUE.equals(v.get()))) {
        sb.append('=');
        appendBareItem(sb, v);
      }
    }
  }

  private static void appendBareItem(StringBuilder sb, Item<?> item) {
    if (item instanceof IntegerItem) {
      sb.append(((IntegerItem) item).getAsLong());
    } else if (item instanceof DecimalItem) {
      appendDecimal(sb, ((DecimalItem) item).getAsLong());
    } else if (item instanceof StringItem) {
      appendString(sb, ((StringItem) item).get());
    } else if (item instanceof TokenItem) {
      sb.append(((TokenItem) item).get());
    } else if (item instanceof ByteSequenceItem) {
      ByteBuffer b = ((ByteSequenceItem) item).get();
      byte[] bytes = new byte[b.remaining()];
      b.duplicate().get(bytes);
      appendByteSequence(sb, bytes);
    } else if (item instanceof BooleanItem) {
      sb.append(Boolean.TRUE.equals(item.get()) ? "?1" : "?0");
    } else {
      throw new IllegalArgumentException("item: expected an Integer, Decimal, String, Token, Byte Sequence or Boolean, got "
          + item.getClass().getSimpleName());
    }
  }

  /** A Decimal held as thousandths: integer part, '.', one to three fractional digits. */
  private static void appendDecimal(StringBuilder sb, long thousandths) {
    if (thousandths < 0) {
      sb.append('-');
    }
    long abs = Math.abs(thousandths);
    sb.append(abs / 1000).append('.');
    long frac = abs % 1000;
    if (frac == 0) {
      sb.append('0');
      return;
    }
    String digits = Long.toString(1000 + frac).substring(1);
    int end = digits.length();
    while (digits.charAt(end - 1) == '0') {
      end--;
    }
    sb.append(digits, 0, end);
  }

  /**
   * A Decimal of this value rounded half to even to three fractional digits (RFC 9651 section
   * 4.1.5).
   *
   * @throws IllegalArgumentException when the integer part has more than 12 digits
   */
  public static DecimalItem decimal(BigDecimal value) {
    BigDecimal rounded = value.setScale(3, RoundingMode.HALF_EVEN);
    if (rounded.abs().compareTo(new BigDecimal("999999999999.999")) > 0) {
      throw new IllegalArgumentException("decimal: expected at most 12 integer digits, got " + value.toPlainString());
    }
    return DecimalItem.valueOf(rounded.movePointRight(3).longValueExact());
  }

  /**
   * Appends an sf-string (RFC 9651 section 4.1.6): quotes, with {@code \} and {@code "} escaped.
   *
   * @throws IllegalArgumentException when a character is outside printable ASCII
   */
  public static StringBuilder appendString(StringBuilder sb, String value) {
    sb.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new IllegalArgumentException("string: expected printable ASCII, got character 0x"
            + Integer.toHexString(c) + " at index " + i);
      }
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"');
  }

  /** Appends an sf-binary (RFC 9651 section 4.1.8): base64 with padding between colons. */
  public static StringBuilder appendByteSequence(StringBuilder sb, byte[] value) {
    return sb.append(':').append(BASE64.encodeToString(value)).append(':');
  }
}
