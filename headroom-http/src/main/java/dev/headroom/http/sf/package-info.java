/**
 * Structured Fields (RFC 8941, RFC 9651): {@link dev.headroom.http.sf.StructuredFields} parses
 * with the {@code org.greenbytes.http:structured-fields} library behind input bounds and serialises
 * with its own walk, so that every field Headroom emits parses and every field it reads follows the
 * RFC's failure rules.
 *
 * <p>May use: the Structured Fields library and the JDK.
 */
package dev.headroom.http.sf;
