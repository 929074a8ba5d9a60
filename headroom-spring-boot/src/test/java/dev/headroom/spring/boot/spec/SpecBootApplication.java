package dev.headroom.spring.boot.spec;

import dev.headroom.Algorithm;
import dev.headroom.QuotaPolicy;
import dev.headroom.conformance.SpecEndpoint;
import dev.headroom.conformance.SpecFixture;
import dev.headroom.spring.boot.RateLimited;
import dev.headroom.vend.VendRateLimiter;
import dev.headroom.vend.VendRateLimits;
import dev.headroom.vend.VendRoute;
import dev.headroom.vend.format.Scope;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The specification's application as Spring MVC controllers. Most routes are declared with
 * {@link RateLimited}; the per-dialect routes come from {@code headroom.routes} properties
 * ({@code SpringBootSpecTest}), so both ways of declaring routes run the same specification.
 */
@SpringBootApplication
public class SpecBootApplication {

  /** {@link SpecFixture#VEND_PATH}: one call a minute per function, on the fixture's limiter (an application's VendRoute bean). */
  static VendRoute vendRoute(SpecFixture fixture) {
    QuotaPolicy calls = QuotaPolicy.builder(SpecFixture.VEND_POLICY).quota(1).window(SpecFixture.WINDOW)
        .algorithm(Algorithm.FIXED_WINDOW).build();
    return VendRoute.builder(SpecFixture.VEND_PATH, VendRateLimiter.builder(VendRateLimits.builder()
        .limit(Scope.FUNCTION, calls).build()).limiter(fixture.limiter()).build()).build();
  }

  @RestController
  static class SpecController {
    private final SpecFixture fixture;

    SpecController(SpecFixture fixture) {
      this.fixture = fixture;
    }

    @GetMapping("/spec/items/{id}")
    @RateLimited("items")
    String item(@PathVariable String id) {
      return "ok";
    }

    @GetMapping("/spec/ip")
    @RateLimited("per-ip")
    String ip() {
      return "ok";
    }

    @GetMapping({"/spec/dialect/{token}", "/spec/bucket/{token}"})
    String dialect(@PathVariable String token) {
      return "ok";
    }

    @PostMapping("/spec/multi")
    @RateLimited(value = {"multi-wide", "multi-narrow"}, dialects = {"ietf", "x-ratelimit"})
    String multi() {
      return "ok";
    }

    @GetMapping("/spec/me")
    @RateLimited("per-user")
    String me() {
      return "ok";
    }

    @GetMapping("/spec/free")
    String free() {
      return "ok";
    }

    /** A vend service: every call succeeds (seed 003 response envelope). */
    @PostMapping(value = "/spec/vend", produces = "application/json")
    String vend(@RequestBody String envelope) {
      return "{\"protocol\":{\"name\":\"vend\",\"version\":\"0.1.0\"},\"id\":\"spec\",\"result\":{\"ok\":true}}";
    }

    /** Routes limited through {@code headroom.routes} properties with their own field rules ({@code SpringBootSpecTest}). */
    @GetMapping({"/spec/escalating", "/spec/escalating-twice", "/spec/reducible", "/spec/fragile", "/spec/jitter",
        "/spec/near", "/spec/capped", "/spec/hidden"})
    String configured() {
      return "ok";
    }

    /** {@code /spec/when}, read and written, limited through {@code headroom.routes} with a method condition. */
    @RequestMapping(value = "/spec/when", method = {RequestMethod.GET, RequestMethod.POST})
    String when() {
      return "ok";
    }

    /** {@link SpecEndpoint#STATUS}: the status and the charge the query asks for. */
    @GetMapping({"/spec/failures", "/spec/charged"})
    ResponseEntity<String> status(@RequestParam(defaultValue = "200") int status,
        @RequestParam(required = false) String charge) {
      ResponseEntity.BodyBuilder b = ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN);
      if (charge != null) {
        b.header(SpecFixture.CHARGE_HEADER, charge);
      }
      return b.body("ok");
    }

    @GetMapping("/spec/slow")
    @RateLimited("slots")
    String slow() {
      fixture.hold().enter();
      return "done";
    }

    /** Asynchronous through Spring MVC: the request thread returns, another completes. */
    @GetMapping("/spec/slow-async")
    @RateLimited("async-slots")
    CompletableFuture<String> slowAsync() {
      return CompletableFuture.supplyAsync(() -> {
        fixture.hold().enter();
        return "done";
      });
    }

    @GetMapping("/spec/moved")
    @RateLimited("moved")
    void moved(@RequestParam(required = false) String to, HttpServletResponse res) throws IOException {
      if ("send".equals(to)) {
        res.sendRedirect("/spec/free");
      } else if ("status".equals(to)) {
        res.setStatus(303);
        res.setHeader("Location", "/spec/free");
      } else {
        res.setContentType("text/plain; charset=utf-8");
        res.getWriter().write("ok");
      }
    }

    @GetMapping("/spec/bytes")
    @RateLimited("bytes")
    void bytes(@RequestParam int n, @RequestParam(defaultValue = "false") boolean writer,
        @RequestParam(required = false) Integer discard, @RequestParam(required = false) String reset,
        HttpServletResponse res) throws IOException {
      if (discard != null) {
        res.setContentType("application/octet-stream");
        byte[] discarded = new byte[discard];
        Arrays.fill(discarded, (byte) 'd');
        res.getOutputStream().write(discarded);
        if ("all".equals(reset)) {
          res.reset();
          res.setStatus(200);
        } else {
          res.resetBuffer();
        }
      }
      char[] xs = new char[n];
      Arrays.fill(xs, 'x');
      if (writer) {
        res.setContentType("text/plain; charset=utf-8");
        PrintWriter w = res.getWriter();
        w.write(xs, 0, n / 2);
        w.write(xs, n / 2, n - n / 2);
      } else {
        res.setContentType("application/octet-stream");
        OutputStream out = res.getOutputStream();
        byte[] b = new String(xs).getBytes(StandardCharsets.US_ASCII);
        out.write(b, 0, n / 2);
        for (int i = n / 2; i < n; i++) {
          out.write(b[i]);
        }
      }
    }
  }
}
