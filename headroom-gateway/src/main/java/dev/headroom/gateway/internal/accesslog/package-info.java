/**
 * The access log's writing: lines handed over by the event loops through a bounded buffer and
 * written by one thread of its own, to standard output or a file reopened on request (logrotate's
 * SIGUSR1).
 *
 * <p>Owns: the buffer, the writer thread, the file and the signal handler. What a line says is the
 * proxy's ({@code internal.proxy}'s {@code AccessRecord}), rendered on the writer thread through
 * {@link dev.headroom.gateway.internal.accesslog.AccessLogWriter.Entry}.
 *
 * <p>May use: the configuration records and SLF4J; never the proxy or the admin listener, which use it.
 */
package dev.headroom.gateway.internal.accesslog;
