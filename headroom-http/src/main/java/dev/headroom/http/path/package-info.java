/**
 * The one path-template grammar every front end, the discovery document, the client and the
 * checker share: {@link dev.headroom.http.path.PathTemplate} ({@code {name}}, {@code {name:regex}}
 * and {@code *} for one segment, a final {@code **} for the rest; literals compare
 * percent-decoded; empty segments are ignored).
 *
 * <p>May use: the JDK only.
 */
package dev.headroom.http.path;
