package dev.headroom.http.headers;

/**
 * Reads one vendor's fields (see {@link VendorDialect}). A reader looks only at the fields its
 * vendor documents, recognises its dialect by a field or a value no other dialect sends, and
 * reports what it read through {@link VendorFields}. It never throws for anything a server sent.
 */
interface VendorReader {

  /** The dialect read. */
  VendorDialect dialect();

  /** Reads the response's fields; returns whether the dialect was recognised (and so reported). */
  boolean read(VendorFields fields);
}
