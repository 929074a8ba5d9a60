package dev.headroom.http.body;

/** Reason phrases (RFC 9110 section 15) for the about:blank title (RFC 9457 section 4.2.1). */
final class ReasonPhrase {
  private ReasonPhrase() {}

  static String of(int status) {
    switch (status) {
      case 400: return "Bad Request";
      case 401: return "Unauthorized";
      case 402: return "Payment Required";
      case 403: return "Forbidden";
      case 404: return "Not Found";
      case 405: return "Method Not Allowed";
      case 406: return "Not Acceptable";
      case 408: return "Request Timeout";
      case 409: return "Conflict";
      case 410: return "Gone";
      case 411: return "Length Required";
      case 412: return "Precondition Failed";
      case 413: return "Content Too Large";
      case 414: return "URI Too Long";
      case 415: return "Unsupported Media Type";
      case 422: return "Unprocessable Content";
      case 428: return "Precondition Required";
      case 429: return "Too Many Requests";
      case 431: return "Request Header Fields Too Large";
      case 500: return "Internal Server Error";
      case 501: return "Not Implemented";
      case 502: return "Bad Gateway";
      case 503: return "Service Unavailable";
      case 504: return "Gateway Timeout";
      default: return status < 500 ? "Client Error" : "Server Error";
    }
  }
}
