package dev.headroom.gateway.internal;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;

/** A response the gateway produces itself (refusals, errors, discovery). Small, fully in memory. */
record LocalResponse(HttpResponseStatus status, String contentType, byte[] body, HttpHeaders headers) {
  LocalResponse(HttpResponseStatus status, String contentType, byte[] body) {
    this(status, contentType, body, new DefaultHttpHeaders());
  }
}
