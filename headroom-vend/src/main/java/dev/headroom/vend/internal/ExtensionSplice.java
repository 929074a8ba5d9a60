package dev.headroom.vend.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.headroom.vend.format.VendJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Inserts one extension entry ({@code {"urn": ..., "data": ...}}) into a vend response held as
 * bytes, without re-encoding the rest of it.
 *
 * <h2>How is this designed, and why?</h2>
 * A gateway sees upstream responses as bytes and must leave every byte it does not own as it was
 * (number spellings, member order, whitespace, escapes). So the document is scanned once with a
 * streaming parser, which validates it and yields the byte offsets of the top-level closing brace
 * and, when there is a top-level {@code extensions} array, of its closing bracket. The entry is
 * then spliced in: appended to that array (with a comma when it has elements), or added as
 * {@code ,"extensions":[entry]} before the closing brace. One pass, one copy, no tree.
 *
 * <p>When the array already holds an entry with the same URN, that entry is replaced: the document
 * is read as a tree (values exact, member order kept), the old entries are removed and the new one
 * appended; whitespace and the spelling of numbers ({@code 1e3} becomes {@code 1E+3}) may then
 * change, never a value.
 *
 * <p>The document is returned unchanged (the same array) when it is larger than the bound, is not
 * one JSON object, exceeds the reader's depth, has a member name twice in one object, or has a
 * top-level {@code extensions} that is not an array: the response then passes through as the
 * upstream sent it, without extension data.
 */
public final class ExtensionSplice {

  private ExtensionSplice() {}

  /**
   * The document with the entry inserted, or {@code doc} itself when it cannot take it.
   *
   * @param reader a mapper from {@link VendJson#reader(int)}
   * @param maxBytes documents longer than this are returned unchanged
   * @param entry the extension entry, an object with a textual {@code urn}
   */
  public static byte[] insert(ObjectMapper reader, byte[] doc, int maxBytes, ObjectNode entry) {
    if (doc.length > maxBytes || doc.length == 0) {
      return doc;
    }
    String urn = entry.path("urn").asText();
    long rootEnd = -1;
    long arrayEnd = -1;
    int arrayElements = 0;
    int rootMembers = 0;
    boolean sameUrn = false;
    try (JsonParser p = reader.getFactory().createParser(doc)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return doc;
      }
      JsonToken t;
      while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
        rootMembers++;
        String name = p.currentName();
        JsonToken value = p.nextToken();
        if (!"extensions".equals(name)) {
          p.skipChildren();
          continue;
        }
        if (value != JsonToken.START_ARRAY) {
          return doc;
        }
        JsonToken element;
        while ((element = p.nextToken()) != JsonToken.END_ARRAY) {
          arrayElements++;
          if (element == JsonToken.START_OBJECT) {
            sameUrn |= objectHasUrn(p, urn);
          } else {
            p.skipChildren();
          }
        }
        arrayEnd = p.currentTokenLocation().getByteOffset();
      }
      if (t != JsonToken.END_OBJECT) {
        return doc;
      }
      rootEnd = p.currentTokenLocation().getByteOffset();
      if (p.nextToken() != null) {
        return doc;
      }
    } catch (IOException e) {
      return doc; // not JSON, too deep, duplicate member: pass through unchanged (class comment)
    }
    if (rootEnd < 0 || (arrayEnd < 0 && rootEnd >= doc.length) || arrayEnd >= doc.length) {
      return doc;
    }
    if (sameUrn) {
      return replace(reader, doc, entry, urn);
    }
    byte[] entryBytes = VendJson.bytes(entry);
    if (arrayEnd >= 0) {
      return splice(doc, (int) arrayEnd, arrayElements > 0 ? "," : "", entryBytes, "");
    }
    return splice(doc, (int) rootEnd, rootMembers > 0 ? ",\"extensions\":[" : "\"extensions\":[", entryBytes, "]");
  }

  /** Reads one object (the parser is on its START_OBJECT) and says whether its urn is {@code urn}. */
  private static boolean objectHasUrn(JsonParser p, String urn) throws IOException {
    boolean found = false;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      if ("urn".equals(name) && v == JsonToken.VALUE_STRING && urn.equals(p.getText())) {
        found = true;
      }
      p.skipChildren();
    }
    return found;
  }

  private static byte[] splice(byte[] doc, int at, String before, byte[] middle, String after) {
    byte[] b = before.getBytes(StandardCharsets.UTF_8);
    byte[] a = after.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[doc.length + b.length + middle.length + a.length];
    System.arraycopy(doc, 0, out, 0, at);
    int i = at;
    System.arraycopy(b, 0, out, i, b.length);
    i += b.length;
    System.arraycopy(middle, 0, out, i, middle.length);
    i += middle.length;
    System.arraycopy(a, 0, out, i, a.length);
    i += a.length;
    System.arraycopy(doc, at, out, i, doc.length - at);
    return out;
  }

  private static byte[] replace(ObjectMapper reader, byte[] doc, ObjectNode entry, String urn) {
    try {
      JsonNode root = reader.readTree(doc);
      ArrayNode ext = (ArrayNode) root.get("extensions");
      for (int i = ext.size() - 1; i >= 0; i--) {
        if (urn.equals(ext.get(i).path("urn").textValue())) {
          ext.remove(i);
        }
      }
      ext.add(entry);
      return VendJson.bytes(root);
    } catch (IOException | RuntimeException e) {
      return doc;
    }
  }
}
