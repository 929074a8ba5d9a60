package dev.headroom.servlet;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.conformance.SpecEndpoint;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.conformance.SpecRoute;
import dev.headroom.enforcement.Gate;
import dev.headroom.enforcement.GateBuilder;
import dev.headroom.http.path.PathTemplate;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.Scope;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** The specification's application as a servlet, and the filter configured from the fixture. */
final class SpecApplication {

  private SpecApplication() {}

  /**
   * The filter for the fixture, handed a gate built with headroom-http's {@link Gate#builder()} as
   * every front end's is ({@link HeadroomFilter#builder(Gate)}): its routes (with their field rules,
   * listing, escalation, method conditions, counting and charge header), limiter and texts, refusing when the store fails; the user from
   * {@link SpecFixture#USER_HEADER}; error bodies on.
   */
  static HeadroomFilter filter(SpecFixture fixture) {
    GateBuilder<HttpServletRequest> b = Gate.<HttpServletRequest>builder()
        .limiter(fixture.limiter())
        .refusals(fixture.refusals())
        .ticker(fixture.ticker())
        .omitOnRedirect(SpecFixture.OMIT_ON_REDIRECT)
        .storeFailureMode(Gate.StoreFailureMode.REFUSE)
        .discovery(SpecFixture.SERVICE, SpecFixture.DESCRIPTION);
    for (SpecRoute r : fixture.routes()) {
      if (!r.policies().isEmpty()) {
        b.route(r.rules());
        r.policies().forEach(p -> r.escalation(p.name()).ifPresent(e -> b.escalation(p.name(), e)));
      }
    }
    return HeadroomFilter.builder(b.build())
        .users(request -> Optional.ofNullable(request.getHeader(SpecFixture.USER_HEADER)))
        .errorBodies(true)
        .vendRoute(vendRoute(fixture))
        .build();
  }

  /** {@link SpecFixture#VEND_PATH}: one call a minute per function, on the fixture's limiter. */
  static VendRoute vendRoute(SpecFixture fixture) {
    QuotaPolicy calls = QuotaPolicy.builder(SpecFixture.VEND_POLICY).quota(1).window(SpecFixture.WINDOW)
        .algorithm(Algorithm.FIXED_WINDOW).build();
    return VendRoute.builder(SpecFixture.VEND_PATH, VendRateLimiter.builder(VendRateLimits.builder()
        .limit(Scope.FUNCTION, calls).build()).limiter(fixture.limiter()).build()).build();
  }

  /** A vend service's success envelope (seed 003) for every call. */
  static final String VEND_RESULT = "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"spec\","
      + "\"result\":{\"ok\":true}}";

  /** Serves the {@link SpecEndpoint}s of the fixture's routes. */
  static final class SpecServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient SpecFixture fixture;
    private final transient List<SpecRoute> routes;

    SpecServlet(SpecFixture fixture) {
      this.fixture = fixture;
      this.routes = fixture.routes();
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
      String path = HeadroomFilter.pathWithinApplication(req);
      // HEAD is served as GET; the container leaves the content out.
      String method = req.getMethod().equals("HEAD") ? "GET" : req.getMethod();
      if (path.equals(SpecFixture.VEND_PATH)) {
        req.getInputStream().readAllBytes(); // the envelope, replayed by the filter
        res.setContentType("application/json");
        res.getWriter().write(VEND_RESULT);
        return;
      }
      SpecEndpoint endpoint = routes.stream()
          .filter(r -> r.methods().contains(method) && PathTemplate.parse(r.template()).matchesDecoded(path))
          .map(SpecRoute::endpoint).findFirst().orElse(null);
      if (endpoint == null) {
        res.sendError(404);
        return;
      }
      switch (endpoint) {
        case OK:
          text(res, "ok");
          break;
        case BLOCKING:
          fixture.hold().enter();
          text(res, "done");
          break;
        case BLOCKING_ASYNC: {
          AsyncContext ctx = req.startAsync();
          ctx.setTimeout(30_000);
          ctx.start(() -> {
            try {
              fixture.hold().enter();
              text((HttpServletResponse) ctx.getResponse(), "done");
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            } finally {
              ctx.complete();
            }
          });
          break;
        }
        case REDIRECT:
          if ("send".equals(req.getParameter("to"))) {
            res.sendRedirect("/spec/free");
          } else if ("status".equals(req.getParameter("to"))) {
            res.setStatus(303);
            res.setHeader("Location", "/spec/free");
          } else {
            text(res, "ok");
          }
          break;
        case BYTES: {
          int n = Integer.parseInt(req.getParameter("n"));
          res.setStatus(200);
          if (req.getParameter("discard") != null) {
            res.setContentType("application/octet-stream");
            byte[] discarded = new byte[Integer.parseInt(req.getParameter("discard"))];
            Arrays.fill(discarded, (byte) 'd');
            res.getOutputStream().write(discarded);
            if ("all".equals(req.getParameter("reset"))) {
              res.reset();
              res.setStatus(200);
            } else {
              res.resetBuffer();
            }
          }
          char[] xs = new char[n];
          Arrays.fill(xs, 'x');
          if ("true".equals(req.getParameter("writer"))) {
            res.setContentType("text/plain; charset=utf-8");
            PrintWriter w = res.getWriter();
            // Two writes, so that counting is not a single call.
            w.write(xs, 0, n / 2);
            w.write(xs, n / 2, n - n / 2);
          } else {
            res.setContentType("application/octet-stream");
            ServletOutputStream out = res.getOutputStream();
            byte[] b = new String(xs).getBytes(StandardCharsets.US_ASCII);
            out.write(b, 0, n / 2);
            for (int i = n / 2; i < n; i++) {
              out.write(b[i]);
            }
          }
          break;
        }
        case STATUS:
          if (req.getParameter("charge") != null) {
            res.setHeader(SpecFixture.CHARGE_HEADER, req.getParameter("charge"));
          }
          res.setStatus(req.getParameter("status") == null ? 200 : Integer.parseInt(req.getParameter("status")));
          res.setContentType("text/plain; charset=utf-8");
          res.getWriter().write("ok");
          break;
        default:
          throw new AssertionError(endpoint);
      }
    }

    private static void text(HttpServletResponse res, String body) throws IOException {
      res.setStatus(200);
      res.setContentType("text/plain; charset=utf-8");
      res.getWriter().write(body);
    }
  }
}
