package dev.sluice.examples.boot;

import dev.sluice.jaxrs.RateLimit;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.security.Principal;

/** The application behind the rate limits: application.yml limits /search (not its help), /partners and /account. */
@RestController
class SearchController {

    @GetMapping("/search")
    String search(@RequestParam(name = "q", defaultValue = "") String q) {
        return "results for '" + q + "'\n";
    }

    @GetMapping("/search/help")
    String help() {
        return "search help\n";
    }

    @GetMapping("/partners/catalog")
    String catalog() {
        return "partner catalog\n";
    }

    @GetMapping("/account")
    String account(Principal principal) {
        return "account of " + principal.getName() + "\n";
    }

    /** 10 a minute per address on this route alone; {@code /suggest} (below) is not limited. */
    @RateLimit(limit = "10/1m")
    @GetMapping("/suggest/{prefix}")
    String suggest(@PathVariable("prefix") String prefix) {
        return "suggestions for '" + prefix + "'\n";
    }

    @GetMapping("/suggest")
    String suggestions() {
        return "popular suggestions\n";
    }
}
