package dev.sluice.spring.boot.demo;

import dev.sluice.Algorithm;
import dev.sluice.jaxrs.RateLimit;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import java.security.Principal;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/** Routes limited by application.yml (search, account) and by {@code @RateLimit} (orders, login, slow). */
@RestController
public class DemoController {

    /** The slow requests in flight, completed by the test. */
    public static final BlockingQueue<DeferredResult<String>> SLOW = new LinkedBlockingQueue<>();

    @GetMapping("/search")
    String search(@RequestParam(name = "q", defaultValue = "") String q) {
        return "results for '" + q + "'\n";
    }

    @GetMapping("/account")
    String account(Principal principal) {
        return "account of " + principal.getName() + "\n";
    }

    @RateLimit(limit = "2/1m")
    @GetMapping("/orders/{id}")
    String order(@PathVariable("id") String id) {
        return "order " + id + "\n";
    }

    @GetMapping("/orders")
    String orders() {
        return "all orders\n";
    }

    /** Failed sign-ins only count: 2 a minute per address. */
    @RateLimit(limit = "2/1m", charge = "after", chargeWhen = "401")
    @PostMapping("/login")
    ResponseEntity<String> login(@RequestParam("password") String password) {
        return "right".equals(password) ? ResponseEntity.ok("welcome\n")
                : ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password\n");
    }

    /** At most 2 at a time; each holds its place until the test completes it. */
    @RateLimit(limit = "2", algorithm = Algorithm.CONCURRENCY, key = "global")
    @GetMapping("/slow")
    DeferredResult<String> slow() {
        DeferredResult<String> result = new DeferredResult<>(30_000L);
        SLOW.add(result);
        return result;
    }
}
