package dev.headroom.vend.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Writes vend response envelopes (vend-notes.md, "Envelope"): the format's writer, which the
 * enforcement module (headroom-vend) uses so that what it writes is what this format reads.
 */
public final class VendResponses {

  private VendResponses() {}

  /** {@code {protocol, id, result: null, errors: [error], extensions?}}; a null id is written as null. */
  public static byte[] error(String protocolVersion, String id, VendError error, ObjectNode extensionData) {
    ObjectNode o = head(protocolVersion, id);
    o.set("result", NullNode.getInstance());
    o.putArray("errors").add(error.toJson());
    extensions(o, extensionData);
    return VendJson.bytes(o);
  }

  /** {@code {protocol, id, result, extensions?}}. */
  public static byte[] success(String protocolVersion, String id, JsonNode result, ObjectNode extensionData) {
    ObjectNode o = head(protocolVersion, id);
    o.set("result", result == null ? NullNode.getInstance() : result.deepCopy());
    extensions(o, extensionData);
    return VendJson.bytes(o);
  }

  /** The extension entry {@code {"urn": ..., "data": ...}}. */
  public static ObjectNode entry(ObjectNode data) {
    ObjectNode e = VendJson.object();
    e.put("urn", RateLimitExtension.URN);
    e.set("data", data);
    return e;
  }

  private static ObjectNode head(String protocolVersion, String id) {
    ObjectNode o = VendJson.object();
    ObjectNode p = o.putObject("protocol");
    p.put("name", RateLimitExtension.PROTOCOL_NAME);
    p.put("version", protocolVersion);
    if (id == null) {
      o.putNull("id");
    } else {
      o.put("id", id);
    }
    return o;
  }

  private static void extensions(ObjectNode o, ObjectNode data) {
    if (data != null) {
      ArrayNode a = o.putArray("extensions");
      a.add(entry(data));
    }
  }
}
